/**
 * Fewer DynamoDB calls for counters that many concurrent requests of one container touch at once
 * (a budget's bucket, a token policy's window), without losing what any of them counts or letting
 * more of them in than one at a time would.
 */

interface Batch {
  amounts: number[];
  settle: Array<{ resolve(total: unknown): void; reject(error: unknown): void }>;
}

interface Counter {
  /** Adds waiting for the write in flight to finish; they go together in the next write. */
  queued?: Batch;
  write: (amounts: number[]) => Promise<unknown>;
}

const counters = new Map<string, Counter>();

/**
 * Adds `amounts` (one per attribute the write adds to) to the counter `key` with `write`, which
 * answers what the write left (the totals after its add). While a write to the same counter is in
 * flight, later adds wait and go together, summed attribute by attribute, in one next write, so a
 * busy counter costs one write per round trip rather than one per request. Each caller's promise
 * settles once the write that carried its amounts has, with that write's answer.
 */
export function coalescedAdd<T>(key: string, amounts: readonly number[], write: (amounts: number[]) => Promise<T>): Promise<T> {
  const counter = counters.get(key);
  if (!counter) {
    counters.set(key, { write });
    return send(key, { amounts: [...amounts], settle: [] }, write);
  }
  counter.write = write;
  const batch = (counter.queued ??= { amounts: amounts.map(() => 0), settle: [] });
  amounts.forEach((amount, index) => (batch.amounts[index] = (batch.amounts[index] ?? 0) + amount));
  return new Promise<T>((resolve, reject) => batch.settle.push({ resolve: resolve as (total: unknown) => void, reject }));
}

function send<T>(key: string, batch: Batch, write: (amounts: number[]) => Promise<T>): Promise<T> {
  const written = write(batch.amounts);
  written.then(
    (total) => batch.settle.forEach((waiter) => waiter.resolve(total)),
    (error: unknown) => batch.settle.forEach((waiter) => waiter.reject(error)),
  );
  // The next write starts once this one has settled, whichever way.
  void written
    .catch(() => undefined)
    .then(() => {
      const counter = counters.get(key)!;
      const next = counter.queued;
      if (!next) return counters.delete(key);
      counter.queued = undefined;
      void send(key, next, counter.write).catch(() => undefined);
    });
  return written;
}

interface Claim {
  amount: number;
  /** The counter's total after the write that admitted the claim, or undefined when it was refused. */
  answer(total: number | undefined): void;
  fail(error: unknown): void;
}

interface ClaimLine {
  queued: Claim[];
  write: (sum: number, cap: number) => Promise<number | undefined>;
}

const claimLines = new Map<string, ClaimLine>();

/**
 * Reserves `amount` on the counter `key` if the counter is below `limit`, with `write(sum, cap)`,
 * a conditional add of `sum` that holds only while the counter is below `cap` (answering the total
 * after it, or undefined when the condition did not hold). Answers that total, or undefined.
 * Claims that arrive while a write is in flight go together in the next one: admitted as if they
 * had come one after another, each finding the counter below the limit. So their cap is the limit
 * less every amount but the largest (that one counts as the last). When the table refuses the
 * whole batch, its first half is tried alone, then the second half only if all the first got in:
 * a burst near the limit costs a few round trips, never one per request, and never admits more
 * than claims made one at a time would.
 */
export function coalescedClaim(key: string, amount: number, limit: number, write: ClaimLine['write']): Promise<number | undefined> {
  return new Promise<number | undefined>((answer, fail) => {
    const claim: Claim = { amount, answer, fail };
    const line = claimLines.get(key);
    if (line) {
      line.write = write;
      line.queued.push(claim);
      return;
    }
    const fresh: ClaimLine = { queued: [], write };
    claimLines.set(key, fresh);
    void drain(key, fresh, [claim], limit);
  });
}

async function drain(key: string, line: ClaimLine, first: Claim[], limit: number): Promise<void> {
  for (let batch = first; batch.length > 0; batch = line.queued.splice(0)) {
    try {
      await admitInOrder(batch, limit, line.write);
    } catch (error) {
      // A claim answered before the failure keeps its answer; a promise settles once.
      for (const claim of batch) claim.fail(error);
    }
  }
  claimLines.delete(key);
}

/** Admits the claims in order, as many as fit; answers whether all of them did. */
async function admitInOrder(claims: Claim[], limit: number, write: ClaimLine['write']): Promise<boolean> {
  let sum = 0;
  let largest = 0;
  for (const claim of claims) {
    sum += claim.amount;
    largest = Math.max(largest, claim.amount);
  }
  const cap = limit - (sum - largest);
  const total = cap > 0 ? await write(sum, cap) : undefined;
  if (total !== undefined) {
    for (const claim of claims) claim.answer(total);
    return true;
  }
  if (claims.length === 1) {
    claims[0]!.answer(undefined);
    return false;
  }
  const half = Math.ceil(claims.length / 2);
  const rest = claims.slice(half);
  if (await admitInOrder(claims.slice(0, half), limit, write)) return admitInOrder(rest, limit, write);
  for (const claim of rest) claim.answer(undefined);
  return false;
}

const reads = new Map<string, Promise<unknown>>();

/**
 * Reads the counter `key` with `read`, sharing a read already in flight for the same counter: the
 * requests of one burst are checked against one answer. A request that joins a read sees the
 * counter as it was when that read was sent, a round trip at most before its own arrival; the
 * checks these counters serve already let requests in flight pass, so this widens nothing a
 * sequential client can see.
 */
export function sharedRead<T>(key: string, read: () => Promise<T>): Promise<T> {
  let pending = reads.get(key) as Promise<T> | undefined;
  if (!pending) {
    pending = read().finally(() => reads.delete(key));
    reads.set(key, pending);
  }
  return pending;
}
