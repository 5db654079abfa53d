import type { CounterStore } from '../counters';
import type { CounterSlot } from '../rate-counters';
import { sliceMs, type ReservedCounter } from '../reserved-counters';
import { usageCounter } from '../usage-counters';

/** One counter as the table holds it: the total `n`, and what each quarter-hour slice holds reserved. */
interface HeldCounter {
  n: number;
  slices: Map<number, number>;
  alertedAt?: number;
}

/** A slice this many quarter hours before the current one holds only leaked reservations (as in the table). */
const staleSlices = 3;

/**
 * The counters in memory, for unit tests of the steps and of workers. It keeps the table's
 * conditions: a request window takes an amount only while its count stays within the limit, a
 * reservation is admitted only while the total is below the limit, a settle keeps the usage and
 * lets the rest of its slice's reservation go, stale slices are released by the next writer, and a
 * period is marked alerted once. Each operation reads and writes in one synchronous step, as one
 * conditional write does. `settled` lets a test read a counter as a listing would.
 */
export function memoryCounters(): CounterStore & { settled(counter: ReservedCounter): number; windowCount(slot: CounterSlot): number } {
  const counters = new Map<string, HeldCounter>();
  const windows = new Map<string, number>();
  const windowId = (slot: CounterSlot) => `${slot.policyId}#${slot.bucket}#${slot.windowStart}`;
  const held = (id: string) => {
    let counter = counters.get(id);
    if (!counter) counters.set(id, (counter = { n: 0, slices: new Map() }));
    return counter;
  };
  const reserved = (counter: HeldCounter) => [...counter.slices.values()].reduce((sum, amount) => sum + amount, 0);
  const releaseStale = (counter: HeldCounter, now: number) => {
    let released = false;
    for (const [slice, amount] of counter.slices) {
      if (slice > Math.floor(now / sliceMs) - staleSlices) continue;
      counter.n -= amount;
      counter.slices.delete(slice);
      released ||= amount !== 0;
    }
    return released;
  };

  return {
    async reserveWindow(slot, amount, limit) {
      const count = windows.get(windowId(slot)) ?? 0;
      if (count > limit - amount) return undefined;
      windows.set(windowId(slot), count + amount);
      return count + amount;
    },

    async claim(counter, amount, limit, now = Date.now()) {
      const item = held(counter.id);
      for (let tidied = false; ; tidied = true) {
        if (item.n < limit) {
          const slice = Math.floor(now / sliceMs);
          item.n += amount;
          item.slices.set(slice, (item.slices.get(slice) ?? 0) + amount);
          return { admitted: true, reservation: { slice, amount }, total: item.n };
        }
        if (tidied || !releaseStale(item, now)) return { admitted: false, total: item.n, settled: item.n - reserved(item) };
      }
    },

    async settle(counter, reservation, used, now = Date.now()) {
      const item = held(counter.id);
      const slice = item.slices.get(reservation.slice);
      if (slice === undefined) item.n += used;
      else {
        item.n += used - reservation.amount;
        item.slices.set(reservation.slice, slice - reservation.amount);
      }
      releaseStale(item, now);
      return item.n - reserved(item);
    },

    async markAlerted(slot, at) {
      const item = counters.get(usageCounter(slot).id);
      if (!item || item.alertedAt !== undefined) return false;
      item.alertedAt = at;
      return true;
    },

    settled(counter) {
      const item = counters.get(counter.id);
      return item ? item.n - reserved(item) : 0;
    },

    windowCount(slot) {
      return windows.get(windowId(slot)) ?? 0;
    },
  };
}
