import { beforeEach, describe, expect, it } from 'vitest';
import { duration } from '../../../lib/ratelimit/enforce';
import { admitRequest, forgetBudgets, type Windows } from '../../../lib/ratelimit/limiter';
import { memoryCounters } from '../../../lib/store/memory/counters';
import type { CounterSlot } from '../../../lib/store/rate-counters';

/** The in-memory counters, with each window write counted. */
function countedCounters() {
  const store = memoryCounters();
  let writes = 0;
  const windows: Windows = {
    reserveWindow(slot, amount, limit) {
      writes++;
      return store.reserveWindow(slot, amount, limit);
    },
  };
  return { windows, writes: () => writes, count: (slot: CounterSlot) => store.windowCount(slot) };
}

const slot = (windowStart = 0, bucket = 'b'): CounterSlot => ({ policyId: 'p', bucket, windowStart, windowEnd: windowStart + 60_000 });

describe('chunked reservations', () => {
  beforeEach(() => forgetBudgets());

  it('admits exactly the limit when demand far exceeds it', async () => {
    const counters = countedCounters();
    let admitted = 0;
    const answers = await Promise.all(Array.from({ length: 300 }, () => admitRequest(slot(), 97, counters.windows)));
    for (const answer of answers) if (answer.admitted) admitted++;
    expect(admitted).toBe(97);
    expect(counters.count(slot())).toBe(97);
  });

  it('costs far fewer writes than requests on a bucket far from its limit', async () => {
    const counters = countedCounters();
    for (let i = 0; i < 10_000; i++) expect((await admitRequest(slot(), 10_000_000, counters.windows)).admitted).toBe(true);
    expect(counters.writes() / 10_000).toBeLessThan(0.02);
  });

  it('starts over in a new window, and shrinks to single units near the limit', async () => {
    const counters = countedCounters();
    for (let i = 0; i < 10; i++) expect((await admitRequest(slot(0), 10, counters.windows)).admitted).toBe(true);
    expect((await admitRequest(slot(0), 10, counters.windows)).admitted).toBe(false);
    expect(counters.writes()).toBe(11);
    expect((await admitRequest(slot(60_000), 10, counters.windows)).admitted).toBe(true);
  });

  it('reports what is left, its own unspent reservation included', async () => {
    const counters = countedCounters();
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) remaining.push((await admitRequest(slot(), 5, counters.windows)).remaining);
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
  });

  it("formats reset times as OpenAI's headers do", () => {
    expect([duration(400), duration(59_000), duration(360_000), duration(3_723_000)]).toEqual(['1s', '59s', '6m0s', '1h2m3s']);
  });
});
