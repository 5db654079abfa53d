import { QueryCommand, TransactWriteItemsCommand, type AttributeValue, type TransactWriteItem } from '@aws-sdk/client-dynamodb';
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

/** Two records' adds into one item: counters summed (decimals exactly), the earliest and latest start. */
function mergeAdds(into: RollupAdd | undefined, add: RollupAdd): RollupAdd {
  if (!into) return add;
  const sum: Record<string, number | string> = { ...into.add };
  for (const [name, value] of Object.entries(add.add)) {
    const had = sum[name];
    sum[name] = had === undefined ? value : typeof had === 'number' && typeof value === 'number' ? had + value : addDecimals(String(had), String(value));
  }
  return {
    ...into,
    add: sum,
    seenAt: add.seenAt < into.seenAt ? add.seenAt : into.seenAt,
    lastSeenAt: (add.lastSeenAt ?? add.seenAt) > (into.lastSeenAt ?? into.seenAt) ? (add.lastSeenAt ?? add.seenAt) : (into.lastSeenAt ?? into.seenAt),
  };
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

function rollupUpdate(add: RollupAdd): NonNullable<TransactWriteItem['Update']> {
  const names: Record<string, string> = {};
  const values: Record<string, AttributeValue> = {
    ':seen': { S: add.seenAt },
    ':last': { S: add.lastSeenAt ?? add.seenAt },
    ':expires': { N: String(add.hourStart + rollupRetentionDays * 86_400) },
  };
  const adds: string[] = [];
  const sets = ['first_seen = if_not_exists(first_seen, :seen)', 'last_seen = :last', 'expiresAt = if_not_exists(expiresAt, :expires)'];
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
