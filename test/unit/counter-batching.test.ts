import { describe, expect, it } from 'vitest';
import { coalescedAdd, coalescedClaim, sharedRead } from '../../lib/store/counter-batching';

/** A counter whose writes the test finishes one at a time. */
function slowCounter() {
  let total = 0;
  const writes: number[] = [];
  const inFlight: Array<{ finish(): void; fail(error: Error): void }> = [];
  const write = ([amount]: number[]) =>
    new Promise<number>((resolve, reject) => {
      writes.push(amount!);
      inFlight.push({ finish: () => resolve((total += amount!)), fail: reject });
    });
  return { write, writes, inFlight };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('coalescedAdd', () => {
  it('sends adds that arrive while a write is in flight as one next write, and loses none', async () => {
    const counter = slowCounter();
    const key = `k-${Math.random()}`;
    const first = coalescedAdd(key, [5], counter.write);
    const queued = [coalescedAdd(key, [1], counter.write), coalescedAdd(key, [2], counter.write), coalescedAdd(key, [3], counter.write)];
    expect(counter.writes).toEqual([5]);
    counter.inFlight.shift()!.finish();
    expect(await first).toBe(5);
    await flush();
    expect(counter.writes).toEqual([5, 6]);
    counter.inFlight.shift()!.finish();
    expect(await Promise.all(queued)).toEqual([11, 11, 11]);
    // Nothing in flight any more: the next add is written at once, alone.
    const later = coalescedAdd(key, [4], counter.write);
    expect(counter.writes).toEqual([5, 6, 4]);
    counter.inFlight.shift()!.finish();
    expect(await later).toBe(15);
  });

  it('fails the adds of a failed write, and still sends the ones queued behind it', async () => {
    const counter = slowCounter();
    const key = `k-${Math.random()}`;
    const first = coalescedAdd(key, [1], counter.write);
    const queued = coalescedAdd(key, [2], counter.write);
    counter.inFlight.shift()!.fail(new Error('throttled'));
    await expect(first).rejects.toThrow('throttled');
    await flush();
    expect(counter.writes).toEqual([1, 2]);
    counter.inFlight.shift()!.finish();
    expect(await queued).toBe(2);
  });

  it('keeps counters apart', async () => {
    const a = slowCounter();
    const b = slowCounter();
    const one = coalescedAdd(`a-${Math.random()}`, [1], a.write);
    const two = coalescedAdd(`b-${Math.random()}`, [2], b.write);
    expect([a.writes, b.writes]).toEqual([[1], [2]]);
    a.inFlight.shift()!.finish();
    b.inFlight.shift()!.finish();
    expect(await Promise.all([one, two])).toEqual([1, 2]);
  });
});

describe('sharedRead', () => {
  it('shares a read in flight, and reads afresh once it has settled', async () => {
    let reads = 0;
    let finish!: (value: number) => void;
    const read = () => {
      reads++;
      return new Promise<number>((resolve) => (finish = resolve));
    };
    const key = `r-${Math.random()}`;
    const both = Promise.all([sharedRead(key, read), sharedRead(key, read)]);
    finish(7);
    expect(await both).toEqual([7, 7]);
    expect(reads).toBe(1);
    const again = sharedRead(key, read);
    finish(8);
    expect(await again).toBe(8);
    expect(reads).toBe(2);
  });
});

describe('coalescedAdd of several attributes', () => {
  it('sums queued adds attribute by attribute', async () => {
    const sent: number[][] = [];
    let finish!: () => void;
    const write = (amounts: number[]) => {
      sent.push(amounts);
      return new Promise<number>((resolve) => (finish = () => resolve(0)));
    };
    const key = `v-${Math.random()}`;
    const first = coalescedAdd(key, [1, -5, 0], write);
    const queued = [coalescedAdd(key, [2, -3, 4], write), coalescedAdd(key, [-1, -2, 1], write)];
    finish();
    await first;
    await flush();
    finish();
    await Promise.all(queued);
    expect(sent).toEqual([
      [1, -5, 0],
      [1, -5, 5],
    ]);
  });
});

/** A counter with the store's reservation condition: a batch's sum is added only while the counter is below its cap. */
function claimCounter(start = 0) {
  let total = start;
  const writes: Array<{ sum: number; cap: number; written: boolean }> = [];
  const pending: Array<() => void> = [];
  const write = (sum: number, cap: number) =>
    new Promise<number | undefined>((resolve) =>
      pending.push(() => {
        const written = total < cap;
        writes.push({ sum, cap, written });
        if (written) total += sum;
        resolve(written ? total : undefined);
      }),
    );
  /** Finishes the writes in flight until none is left. */
  const run = async () => {
    for (;;) {
      await flush();
      const next = pending.shift();
      if (!next) return;
      next();
    }
  };
  return { write, writes, run, total: () => total };
}

describe('coalescedClaim', () => {
  it('admits a burst as claims one at a time would: each finds the counter below the limit, and no more', async () => {
    const counter = claimCounter();
    const key = `c-${Math.random()}`;
    const claims = Array.from({ length: 50 }, () => coalescedClaim(key, 16, 100, counter.write));
    await counter.run();
    const answers = await Promise.all(claims);
    const admitted = answers.filter((total) => total !== undefined).length;
    // 0, 16, …, 96 are below 100: seven claims of 16 get in, one at a time or together.
    expect(admitted).toBe(7);
    expect(counter.total()).toBe(7 * 16);
    // The burst cost a few round trips, not one per claim.
    expect(counter.writes.length).toBeLessThan(20);
  });

  it('lets a claim of any size in while the counter is below the limit, and refuses one at it', async () => {
    const counter = claimCounter(99);
    const key = `c-${Math.random()}`;
    const big = coalescedClaim(key, 5_000, 100, counter.write);
    await counter.run();
    expect(await big).toBe(5_099);
    const next = coalescedClaim(key, 1, 100, counter.write);
    await counter.run();
    expect(await next).toBeUndefined();
  });

  it('refuses every claim of a failed write, and serves the ones queued behind it', async () => {
    const key = `c-${Math.random()}`;
    let calls = 0;
    const write = async () => {
      calls++;
      await flush();
      if (calls === 1) throw new Error('throttled');
      return 1;
    };
    const first = coalescedClaim(key, 1, 10, write);
    const queued = coalescedClaim(key, 1, 10, write);
    await expect(first).rejects.toThrow('throttled');
    expect(await queued).toBe(1);
  });
});
