import { reserveOnCounter, type CounterSlot } from './rate-counters';
import { claim, settle, type Claimed, type Reservation, type ReservedCounter } from './reserved-counters';
import { markAlerted, type UsageSlot } from './usage-counters';

/**
 * The counters rate limits and budgets count on: request windows that processes take chunks of,
 * and reserved counters (token windows, budget periods) that a request reserves on before its
 * provider is called and settles once its usage is known. The state table holds them
 * (`dynamoCounters`); tests of the steps use the in-memory store of `memory/counters.ts`, which keeps
 * the same conditions.
 */
export interface CounterStore {
  /** Adds `amount` to a request window if its count stays at or under `limit`: the count after, or undefined (nothing added). */
  reserveWindow(slot: CounterSlot, amount: number, limit: number): Promise<number | undefined>;
  /** Reserves `amount` while the counter is below `limit`. */
  claim(counter: ReservedCounter, amount: number, limit: number, now?: number): Promise<Claimed>;
  /** Settles a reservation with what was used; answers the counter's settled usage after it. */
  settle(counter: ReservedCounter, reservation: Reservation, used: number, now?: number): Promise<number>;
  /** Marks a budget period's bucket alerted: true only for the one call that marked it. */
  markAlerted(slot: UsageSlot, at: number): Promise<boolean>;
}

export const dynamoCounters: CounterStore = { reserveWindow: reserveOnCounter, claim, settle, markAlerted };
