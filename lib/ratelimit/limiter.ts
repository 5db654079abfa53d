/**
 * Requests counted against a window's limit with reservations: a process takes a chunk of the
 * window's budget with one conditional write and admits requests from it in memory, so a busy
 * bucket costs a write per chunk, not per request. Chunks start at 1 and double while the bucket
 * stays busy (up to `maxChunk`), and never exceed an eighth of what is left of the limit, so they
 * shrink to 1 near it. The limit is never exceeded: every admitted request spends a unit the table
 * counted. A chunk not spent by the window's end is not returned; it expires with the window (the
 * fairness cost: near the limit, another process may be refused while one still holds at most an
 * eighth of what was left).
 */
import type { CounterStore } from '../store/counters';
import type { CounterSlot } from '../store/rate-counters';

export interface Admission {
  admitted: boolean;
  /** What is left of the limit as this process last saw the table, its own unspent chunk included. */
  remaining: number;
}

interface Budget {
  key: string;
  windowStart: number;
  limit: number;
  /** Reserved and not yet spent here. */
  left: number;
  /** The window's count after this process's last reservation. */
  counted: number;
  chunk: number;
  /** The table refused a single unit: the window is spent (reservations are never returned). */
  spent: boolean;
  reserving?: Promise<void>;
}

const maxChunk = 64;
const headroomShare = 8;
const maxBudgets = 10_000;
const budgets = new Map<string, Budget>();

export type Windows = Pick<CounterStore, 'reserveWindow'>;

/** Takes one request from the slot's window, or refuses it when the limit is reached. */
export async function admitRequest(slot: CounterSlot, limit: number, windows: Windows): Promise<Admission> {
  const key = `${slot.policyId}#${slot.bucket}`;
  for (;;) {
    const budget = budgetOf(key, slot.windowStart, limit);
    if (budget.left > 0) {
      budget.left--;
      return { admitted: true, remaining: Math.max(0, limit - budget.counted) + budget.left };
    }
    if (budget.spent) return { admitted: false, remaining: 0 };
    budget.reserving ??= reserveChunk(budget, slot, windows).finally(() => (budget.reserving = undefined));
    await budget.reserving;
  }
}

function budgetOf(key: string, windowStart: number, limit: number): Budget {
  const known = budgets.get(key);
  // A new window, or a changed limit, starts over; what was reserved under the old one is let go.
  if (known && known.windowStart === windowStart && known.limit === limit) return known;
  if (known) budgets.delete(key);
  while (budgets.size >= maxBudgets) budgets.delete(budgets.keys().next().value!);
  const budget: Budget = { key, windowStart, limit, left: 0, counted: 0, chunk: 1, spent: false };
  budgets.set(key, budget);
  return budget;
}

async function reserveChunk(budget: Budget, slot: CounterSlot, windows: Windows): Promise<void> {
  let amount = Math.max(1, Math.min(budget.chunk, Math.floor((budget.limit - budget.counted) / headroomShare)));
  for (;;) {
    const counted = await windows.reserveWindow(slot, amount, budget.limit);
    if (counted !== undefined) {
      budget.left += amount;
      budget.counted = counted;
      budget.chunk = Math.min(maxChunk, budget.chunk * 2);
      return;
    }
    if (amount === 1) {
      budget.spent = true;
      budget.counted = budget.limit;
      return;
    }
    // Others reserved in between: less is left than this process thought; ask for what surely fits.
    amount = 1;
  }
}

/** Forgets every reservation (tests). */
export function forgetBudgets(): void {
  budgets.clear();
}
