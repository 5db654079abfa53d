/**
 * Fewer DynamoDB calls for counters that many concurrent requests of one container touch at once
 * (a budget's bucket, a token policy's window), without losing what any of them counts.
 */

interface Batch {
  amount: number;
  settle: Array<{ resolve(total: number): void; reject(error: unknown): void }>;
}

interface Counter {
  /** Adds waiting for the write in flight to finish; they go together in the next write. */
  queued?: Batch;
  write: (amount: number) => Promise<number>;
}

const counters = new Map<string, Counter>();

/**
 * Adds `amount` to the counter `key` with `write` (which answers the total after its add). While a
 * write to the same counter is in flight, later adds wait and go together in one next write, so
 * a busy counter costs one write per round trip rather than one per request. Each caller's
 * promise settles once the write that carried its amount has, with that write's total.
 */
export function coalescedAdd(key: string, amount: number, write: (amount: number) => Promise<number>): Promise<number> {
  const counter = counters.get(key);
  if (!counter) {
    counters.set(key, { write });
    return send(key, { amount, settle: [] }, write);
  }
  counter.write = write;
  const batch = (counter.queued ??= { amount: 0, settle: [] });
  batch.amount += amount;
  return new Promise((resolve, reject) => batch.settle.push({ resolve, reject }));
}

function send(key: string, batch: Batch, write: (amount: number) => Promise<number>): Promise<number> {
  const written = write(batch.amount);
  written.then(
    (total) => batch.settle.forEach((waiter) => waiter.resolve(total)),
    (error: unknown) => batch.settle.forEach((waiter) => waiter.reject(error)),
  );
  // The next write starts once this one has settled, whichever way.
  void written.catch(() => undefined).then(() => {
    const counter = counters.get(key)!;
    const next = counter.queued;
    if (!next) return counters.delete(key);
    counter.queued = undefined;
    void send(key, next, counter.write).catch(() => undefined);
  });
  return written;
}

const reads = new Map<string, Promise<number>>();

/**
 * Reads the counter `key` with `read`, sharing a read already in flight for the same counter: the
 * requests of one burst are checked against one answer. A request that joins a read sees the
 * counter as it was when that read was sent, a round trip at most before its own arrival; the
 * checks these counters serve already let requests in flight pass, so this widens nothing a
 * sequential client can see.
 */
export function sharedRead(key: string, read: () => Promise<number>): Promise<number> {
  let pending = reads.get(key);
  if (!pending) {
    pending = read().finally(() => reads.delete(key));
    reads.set(key, pending);
  }
  return pending;
}
