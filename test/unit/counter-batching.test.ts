import { describe, expect, it } from 'vitest';
import { coalescedAdd, sharedRead } from '../../lib/store/counter-batching';

/** A counter whose writes the test finishes one at a time. */
function slowCounter() {
  let total = 0;
  const writes: number[] = [];
  const inFlight: Array<{ finish(): void; fail(error: Error): void }> = [];
  const write = (amount: number) =>
    new Promise<number>((resolve, reject) => {
      writes.push(amount);
      inFlight.push({ finish: () => resolve((total += amount)), fail: reject });
    });
  return { write, writes, inFlight };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('coalescedAdd', () => {
  it('sends adds that arrive while a write is in flight as one next write, and loses none', async () => {
    const counter = slowCounter();
    const key = `k-${Math.random()}`;
    const first = coalescedAdd(key, 5, counter.write);
    const queued = [coalescedAdd(key, 1, counter.write), coalescedAdd(key, 2, counter.write), coalescedAdd(key, 3, counter.write)];
    expect(counter.writes).toEqual([5]);
    counter.inFlight.shift()!.finish();
    expect(await first).toBe(5);
    await flush();
    expect(counter.writes).toEqual([5, 6]);
    counter.inFlight.shift()!.finish();
    expect(await Promise.all(queued)).toEqual([11, 11, 11]);
    // Nothing in flight any more: the next add is written at once, alone.
    const later = coalescedAdd(key, 4, counter.write);
    expect(counter.writes).toEqual([5, 6, 4]);
    counter.inFlight.shift()!.finish();
    expect(await later).toBe(15);
  });

  it('fails the adds of a failed write, and still sends the ones queued behind it', async () => {
    const counter = slowCounter();
    const key = `k-${Math.random()}`;
    const first = coalescedAdd(key, 1, counter.write);
    const queued = coalescedAdd(key, 2, counter.write);
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
    const one = coalescedAdd(`a-${Math.random()}`, 1, a.write);
    const two = coalescedAdd(`b-${Math.random()}`, 2, b.write);
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
