/**
 * Counters that a request reserves on before its provider is called and settles once its usage
 * is known: token and cost budgets, token rate limits. A counter item holds `n`, the usage settled
 * plus what requests under way reserved, and one `r<slice>` per quarter hour with what was reserved
 * in it and not settled yet; the settled usage is `n` less those. A reservation is admitted only
 * while `n` is below the limit (one conditional write), so requests in flight at the same time see
 * each other's reservations, not only the usage of those already answered.
 *
 * A reservation whose request never settles it (its process was stopped mid-request) is released
 * by the next writer that finds its quarter hour stale: no request runs that long (a function's
 * timeout is 15 minutes), so whatever is left in a slice three quarter hours old was leaked.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { writeIfCondition } from './conditional';
import { coalescedAdd, coalescedClaim, sharedRead } from './counter-batching';
import { getItemFast, updateItemFast } from './lean-dynamo';
import { tables } from './tables';

type Item = Record<string, AttributeValue>;

export interface ReservedCounter {
  /** Names the counter within this process (writes that go together, reads that are shared). */
  id: string;
  key: Item;
  /** Epoch seconds after which the table may drop the item. */
  expiresAt?: number;
  /** Kept on the item from its first write (a budget's group values, so a listing can name the bucket). */
  group?: Record<string, string | null>;
}

/** What one request holds on a counter until it settles. */
export interface Reservation {
  slice: number;
  amount: number;
}

export type Claimed = { admitted: true; reservation: Reservation; total: number } | { admitted: false; total: number; settled: number };

export const sliceMs = 15 * 60_000;
/** A slice this many quarter hours before the current one can only hold leaked reservations. */
const staleSlices = 3;
const sliceOf = (now: number) => Math.floor(now / sliceMs);
const sliceName = (slice: number) => `r${slice}`;
const slicePattern = /^r(\d+)$/;

/** The counter's total (`n`) and its settled usage (`n` less every unsettled reservation). */
export function readTotals(item: Item | undefined): { total: number; settled: number } {
  const total = Number(item?.n?.N ?? 0);
  let reserved = 0;
  for (const name in item) if (slicePattern.test(name)) reserved += Number(item[name]!.N ?? 0);
  return { total, settled: total - reserved };
}

/**
 * Reserves `amount` if the counter is below `limit`. Claims of one counter that overlap in this
 * process go in one write (counter-batching.ts). A refusal reads the counter: the caller learns
 * the settled usage (is it spent, or only held by requests under way?), and stale reservations
 * found there are released, after which the claim is tried once more.
 */
export async function claim(counter: ReservedCounter, amount: number, limit: number, now = Date.now()): Promise<Claimed> {
  const slice = sliceOf(now);
  const write = async (sum: number, cap: number) => {
    let total: number | undefined;
    const written = await writeIfCondition(async () => {
      const attributes = await updateItemFast({
        TableName: tables.state,
        Key: counter.key,
        UpdateExpression: `ADD #n :sum, #r :sum${stampExpression(counter)}`,
        ConditionExpression: 'attribute_not_exists(#n) OR #n < :cap',
        ExpressionAttributeNames: { '#n': 'n', '#r': sliceName(slice), ...stampNames(counter) },
        ExpressionAttributeValues: marshall({ ':sum': sum, ':cap': cap, ...stampValues(counter) }),
        ReturnValues: 'UPDATED_NEW',
      });
      total = Number(attributes?.n?.N ?? sum);
    });
    return written ? total : undefined;
  };
  for (let tidied = false; ; tidied = true) {
    const total = await coalescedClaim(`${counter.id}#${slice}#${limit}`, amount, limit, write);
    if (total !== undefined) return { admitted: true, reservation: { slice, amount }, total };
    const item = await sharedRead(`${counter.id}#item`, () => getItemFast(tables.state, counter.key, { consistent: true }));
    if (tidied || !(await releaseStale(counter, item, now))) return { admitted: false, ...readTotals(item) };
  }
}

/**
 * Settles a reservation with what the request used: the counter keeps `used` and lets the rest of
 * the reservation go (or takes the excess, when the request used more). Settles of one slice that
 * overlap in this process go in one write. Answers the settled usage after the write.
 */
export async function settle(counter: ReservedCounter, reservation: Reservation, used: number, now = Date.now()): Promise<number> {
  const item = await coalescedAdd(
    `${counter.id}#${reservation.slice}`,
    [used - reservation.amount, -reservation.amount, used],
    async ([change, release, usedSum]) => {
      const names = { '#n': 'n', ...stampNames(counter) };
      const stamp = stampExpression(counter);
      let attributes: Item | undefined;
      const settled = await writeIfCondition(async () => {
        attributes = await updateItemFast({
          TableName: tables.state,
          Key: counter.key,
          UpdateExpression: `ADD #n :change, #r :release${stamp}`,
          ConditionExpression: 'attribute_exists(#r)',
          ExpressionAttributeNames: { ...names, '#r': sliceName(reservation.slice) },
          ExpressionAttributeValues: marshall({ ':change': change!, ':release': release!, ...stampValues(counter) }),
          ReturnValues: 'ALL_NEW',
        });
      });
      if (settled) return attributes;
      // The slice was released as stale already (a request that outlived every timeout): its
      // reservation is gone from `n`, so only the usage is added.
      return updateItemFast({
        TableName: tables.state,
        Key: counter.key,
        UpdateExpression: `ADD #n :used${stamp}`,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: marshall({ ':used': usedSum!, ...stampValues(counter) }),
        ReturnValues: 'ALL_NEW',
      });
    },
  );
  if (staleNames(item, now).length > 0) await releaseStale(counter, item, now);
  return readTotals(item).settled;
}

/** Names of the item's slices old enough that only leaked reservations can be left in them. */
function staleNames(item: Item | undefined, now: number): string[] {
  const current = sliceOf(now);
  const stale: string[] = [];
  for (const name in item) {
    const match = slicePattern.exec(name);
    if (match && Number(match[1]) <= current - staleSlices) stale.push(name);
  }
  return stale;
}

/**
 * Takes stale slices off the item and their amounts off `n`, if they still hold what the item
 * read said (another process may have done it first). Answers whether any reservation was released.
 */
async function releaseStale(counter: ReservedCounter, item: Item | undefined, now: number): Promise<boolean> {
  const stale = staleNames(item, now);
  if (stale.length === 0) return false;
  const names: Record<string, string> = { '#n': 'n' };
  const values: Record<string, number> = {};
  let leaked = 0;
  stale.forEach((name, index) => {
    names[`#s${index}`] = name;
    values[`:s${index}`] = Number(item![name]!.N ?? 0);
    leaked += values[`:s${index}`]!;
  });
  const released = await writeIfCondition(() =>
    updateItemFast({
      TableName: tables.state,
      Key: counter.key,
      UpdateExpression: `ADD #n :leaked REMOVE ${stale.map((_, index) => `#s${index}`).join(', ')}`,
      ConditionExpression: stale.map((_, index) => `#s${index} = :s${index}`).join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: marshall({ ':leaked': -leaked, ...values }),
    }),
  );
  return released && leaked !== 0;
}

function stampExpression(counter: ReservedCounter): string {
  const parts = [counter.expiresAt === undefined ? '' : 'expiresAt = :ttl', counter.group === undefined ? '' : '#g = if_not_exists(#g, :group)'].filter(
    Boolean,
  );
  return parts.length === 0 ? '' : ` SET ${parts.join(', ')}`;
}

function stampNames(counter: ReservedCounter): Record<string, string> {
  return counter.group === undefined ? {} : { '#g': 'group' };
}

function stampValues(counter: ReservedCounter): Record<string, unknown> {
  return { ...(counter.expiresAt === undefined ? {} : { ':ttl': counter.expiresAt }), ...(counter.group === undefined ? {} : { ':group': counter.group }) };
}
