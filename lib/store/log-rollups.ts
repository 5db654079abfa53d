import { QueryCommand, TransactWriteItemsCommand, UpdateItemCommand, type AttributeValue, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { sleep } from '../core/time';
import { dynamoClient } from './clients';
import { tables } from './tables';

/** Rollups outlive the records they count (365 days of metrics, as `METRICS_RETENTION_DISPLAY` says). */
const rollupRetentionDays = Number(process.env.GATEWAY_ROLLUP_RETENTION_DAYS ?? 400);

/** One rollup item a record adds into: counters (numbers, or exact decimals as strings) and the record's start time. */
export interface RollupAdd {
  key: { pk: string; sk: string };
  /** The swapped view of a pair item, on gsi2. */
  index?: { pk: string; sk: string };
  /** Attributes set on the item (a cell's dimension values). */
  fields?: Record<string, string>;
  add: Record<string, number | string>;
  /** The record's start (ISO 8601): first and last seen. */
  seenAt: string;
  /** The latest start, when several records' adds are merged (`seenAt` is then the earliest). */
  lastSeenAt?: string;
  /** Epoch seconds of the item's hour, for its expiry. */
  hourStart: number;
}

/** DynamoDB's limit of actions in one transaction. */
export const maxTransactionItems = 100;
const maxAttempts = 8;

/**
 * Stores records and adds them into their rollups, each record once. A transaction holds records
 * of the batch (up to 100 items: the records' puts and the union of their rollup items, each
 * rollup item's adds summed) and every record put is conditional on its key being free: a record
 * stored already (its line delivered again, or a batch redelivered after an ingest that failed
 * half-way, whose transactions either happened whole or not at all) cancels the transaction, which
 * runs again without it. A transaction failing for any other reason (a conflict with another
 * ingest adding into the same hour, throttling) changed nothing and is tried again. Answers how
 * many records were new.
 */
export async function putRecordsWithRollups(records: readonly { item: Record<string, AttributeValue>; rollups: readonly RollupAdd[] }[]): Promise<number> {
  // Times first, once for the whole batch (see widenSeen).
  const bounds = new Map<string, RollupAdd>();
  for (const { rollups } of records) for (const add of rollups) bounds.set(itemKey(add), mergeSeen(bounds.get(itemKey(add)), add));
  await widenSeen([...bounds.values()]);
  let stored = 0;
  let group: typeof records = [];
  let keys = new Set<string>();
  for (const record of records) {
    const more = record.rollups.filter((add) => !keys.has(itemKey(add))).length;
    if (group.length > 0 && group.length + 1 + keys.size + more > maxTransactionItems) {
      stored += await putGroup(group);
      group = [];
      keys = new Set();
    }
    if (record.rollups.length + 1 > maxTransactionItems)
      throw new Error(`A record's rollups are ${record.rollups.length} items; a transaction holds ${maxTransactionItems - 1}.`);
    group = [...group, record];
    for (const add of record.rollups) keys.add(itemKey(add));
  }
  if (group.length > 0) stored += await putGroup(group);
  return stored;
}

const itemKey = (add: RollupAdd) => `${add.key.pk}\n${add.key.sk}`;

async function putGroup(group: readonly { item: Record<string, AttributeValue>; rollups: readonly RollupAdd[] }[]): Promise<number> {
  let pending = [...group];
  for (let attempt = 1; pending.length > 0; attempt++) {
    const merged = new Map<string, RollupAdd>();
    for (const { rollups } of pending) for (const add of rollups) merged.set(itemKey(add), mergeAdds(merged.get(itemKey(add)), add));
    const items: TransactWriteItem[] = [
      ...pending.map(({ item }) => ({ Put: { TableName: tables.logs, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } })),
      ...[...merged.values()].map((add) => ({ Update: rollupUpdate(add) })),
    ];
    try {
      await dynamoClient().send(new TransactWriteItemsCommand({ TransactItems: items }));
      return pending.length;
    } catch (error) {
      const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
      const stored = new Set(pending.filter((_, n) => reasons?.[n]?.Code === 'ConditionalCheckFailed'));
      if (stored.size > 0) {
        pending = pending.filter((record) => !stored.has(record));
        return putGroup(pending);
      }
      if (attempt >= maxAttempts) throw error;
      await sleep(Math.min(2000, 25 * 2 ** attempt * (0.5 + Math.random())));
    }
  }
  return 0;
}

/** Two records' adds into one item: counters summed (decimals exactly). */
function mergeAdds(into: RollupAdd | undefined, add: RollupAdd): RollupAdd {
  if (!into) return add;
  const sum: Record<string, number | string> = { ...into.add };
  for (const [name, value] of Object.entries(add.add)) {
    const had = sum[name];
    sum[name] = had === undefined ? value : typeof had === 'number' && typeof value === 'number' ? had + value : addDecimals(String(had), String(value));
  }
  return { ...into, add: sum };
}

/** The earliest and latest start of two adds into one item (their counters are not needed). */
function mergeSeen(into: RollupAdd | undefined, add: RollupAdd): RollupAdd {
  if (!into) return add;
  const last = (one: RollupAdd) => one.lastSeenAt ?? one.seenAt;
  const [first] = [add.seenAt, into.seenAt].sort();
  const [, latest] = [last(add), last(into)].sort();
  return { ...into, seenAt: first!, lastSeenAt: latest! };
}

/** The exact sum of two non-negative decimals (`0.000012000` + `1.5`). */
function addDecimals(a: string, b: string): string {
  const scale = Math.max(a.split('.')[1]?.length ?? 0, b.split('.')[1]?.length ?? 0);
  const units = (text: string) => {
    const [whole, fraction = ''] = text.split('.');
    return BigInt(whole! + fraction.padEnd(scale, '0'));
  };
  const total = (units(a) + units(b)).toString().padStart(scale + 1, '0');
  return scale === 0 ? total : `${total.slice(0, -scale)}.${total.slice(-scale)}`;
}

/** How many first/last-seen updates run at once. */
const seenConcurrency = 32;

/**
 * What this process knows of items' stored times: `first_seen` is at most `first` and `last_seen`
 * at least `last` (stored times only ever move outward), so an update that would not move them
 * is not sent. Most records arrive in order, which makes most `first_seen` updates unnecessary.
 */
const knownSeen = new Map<string, { first: string; last: string }>();
const knownSeenLimit = 20_000;

/**
 * Moves each item's `first_seen` back and `last_seen` forward to the records' starts, with updates
 * conditional on the time being earlier (later) than the stored one: a minimum and a maximum are
 * idempotent, so these need no transaction, and they run before it, so a record counted is always
 * within its items' range whatever order records arrive in. A failed condition is the usual case
 * (the item has seen an earlier or later record already) and changes nothing.
 */
async function widenSeen(adds: readonly RollupAdd[]): Promise<void> {
  const updates = adds.flatMap((add) => {
    const known = knownSeen.get(itemKey(add));
    const last = add.lastSeenAt ?? add.seenAt;
    return [
      ...(known && known.first <= add.seenAt ? [] : [{ add, name: 'first_seen', at: add.seenAt, condition: 'attribute_not_exists(#t) OR #t > :t' }]),
      ...(known && known.last >= last ? [] : [{ add, name: 'last_seen', at: last, condition: 'attribute_not_exists(#t) OR #t < :t' }]),
    ];
  });
  let next = 0;
  const worker = async () => {
    for (let update = updates[next++]; update; update = updates[next++]) {
      try {
        await dynamoClient().send(
          new UpdateItemCommand({
            TableName: tables.logs,
            Key: { pk: { S: update.add.key.pk }, sk: { S: update.add.key.sk } },
            UpdateExpression: 'SET #t = :t, expiresAt = if_not_exists(expiresAt, :expires)',
            ConditionExpression: update.condition,
            ExpressionAttributeNames: { '#t': update.name },
            ExpressionAttributeValues: { ':t': { S: update.at }, ':expires': { N: String(update.add.hourStart + rollupRetentionDays * 86_400) } },
          }),
        );
      } catch (error) {
        if ((error as Error).name !== 'ConditionalCheckFailedException') throw error;
      }
      // Either way the stored time is now at least this far out.
      const key = itemKey(update.add);
      const known = knownSeen.get(key) ?? { first: update.at, last: update.at };
      if (update.name === 'first_seen' && update.at < known.first) known.first = update.at;
      if (update.name === 'last_seen' && update.at > known.last) known.last = update.at;
      knownSeen.delete(key);
      knownSeen.set(key, known);
      if (knownSeen.size > knownSeenLimit) knownSeen.delete(knownSeen.keys().next().value!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(seenConcurrency, updates.length) }, worker));
}

function rollupUpdate(add: RollupAdd): NonNullable<TransactWriteItem['Update']> {
  const names: Record<string, string> = {};
  const values: Record<string, AttributeValue> = {
    ':expires': { N: String(add.hourStart + rollupRetentionDays * 86_400) },
  };
  const adds: string[] = [];
  const sets = ['expiresAt = if_not_exists(expiresAt, :expires)'];
  let n = 0;
  for (const [name, value] of Object.entries(add.add)) {
    names[`#a${n}`] = name;
    values[`:a${n}`] = { N: String(value) };
    adds.push(`#a${n} :a${n}`);
    n++;
  }
  const fields = { ...add.fields, ...(add.index ? { gsi2pk: add.index.pk, gsi2sk: add.index.sk } : {}) };
  for (const [name, value] of Object.entries(fields)) {
    names[`#a${n}`] = name;
    values[`:a${n}`] = { S: value };
    sets.push(`#a${n} = :a${n}`);
    n++;
  }
  return {
    TableName: tables.logs,
    Key: { pk: { S: add.key.pk }, sk: { S: add.key.sk } },
    UpdateExpression: `ADD ${adds.join(', ')} SET ${sets.join(', ')}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/**
 * Every rollup item of one view whose sort key lies in [from, to] (hours as `YYYY-MM-DDTHH`), from
 * the table's keys or, for a swapped pair view, from gsi2.
 */
export async function queryRollups(view: { partition: string; index?: 'gsi2' }, from: string, to: string): Promise<Record<string, any>[]> {
  const [pk, sk] = view.index ? ['gsi2pk', 'gsi2sk'] : ['pk', 'sk'];
  const items: Record<string, any>[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.logs,
        IndexName: view.index,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': pk, '#sk': sk },
        ExpressionAttributeValues: { ':pk': { S: view.partition }, ':from': { S: `${from}#` }, ':to': { S: `${to}#\uffff` } },
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) items.push(unmarshall(item));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}
