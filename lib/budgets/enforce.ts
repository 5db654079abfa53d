/**
 * Applying budgets to a request: which budgets select it, which bucket and period it falls in,
 * reserving what it may spend while that bucket has usage left, and after the answer, settling
 * what it spent and raising the period's alert once.
 */
import { GatewayError } from '../core/errors';
import { bucketOf, selects, type ValueOf } from '../ratelimit/enforce';
import type { CounterStore } from '../store/counters';
import type { Reservation } from '../store/reserved-counters';
import { usageCounter, type UsageSlot } from '../store/usage-counters';
import { periodAt } from './periods';
import type { ActiveBudget } from './policies';

/** Cost is counted in whole nano-dollars: integer sums stay exact however many requests add to them. */
export const nanoUsdPerUsd = 1_000_000_000;

/** A budget's limit in the units its counter holds. */
export const counterUnits = (type: ActiveBudget['type'], amount: number) => (type === 'cost' ? Math.round(amount * nanoUsdPerUsd) : amount);
/** A counter's units as the budget's own (USD or tokens). */
export const budgetUnits = (type: ActiveBudget['type'], units: number) => (type === 'cost' ? units / nanoUsdPerUsd : units);

/** A bucket a request fell in, the budget that made it, and what the request reserved on it. */
/** A request's budgets as its steps go: which apply per target attempt, and what each reserved. */
export interface BudgetState {
  /** Budgets reserved on per target attempt: those on a target key, and cost budgets (priced once the target is known). */
  attemptBudgets: readonly ActiveBudget[];
  requestSlots: BudgetSlot[];
  /** The last target attempt's reservations: the attempt whose answer the client gets. */
  targetSlots: BudgetSlot[];
}

export interface BudgetSlot {
  budget: ActiveBudget;
  slot: UsageSlot;
  reservation: Reservation;
}

export function slotOfBudget(budget: ActiveBudget, valueOf: ValueOf, now: number): UsageSlot {
  const period = periodAt(budget.reset, now);
  const group = Object.fromEntries(budget.groupKeys.map((key) => [key, valueOf(key) ?? null]));
  return { policyId: budget.id, periodStart: period.start, periodEnd: period.end, bucket: bucketOf(budget.groupKeys, valueOf), group };
}

/** A request refused by a budget: 412, as Portkey answers an exhausted budget, naming the policy. */
export class BudgetExceededError extends GatewayError {
  constructor(
    message: string,
    readonly policyId: string,
  ) {
    super(412, message, { code: 'budget_exceeded', type: 'budget_exceeded' });
  }
}

/** What a request may spend in a budget's units (counter units: tokens, or nano-dollars). */
export type Estimate = (budget: ActiveBudget) => number;

/**
 * Reserves the request's estimate on every budget that selects it, admitted only while the
 * bucket's usage with every reservation under way is below the limit; throws the 412 of the first
 * one that refuses (releasing what the others reserved), or answers the reservations to settle
 * once the answer is complete. Requests admitted this way pass the limit together by at most the
 * last one's usage, when each uses no more than it reserved.
 */
export async function enforceBudgets(
  counters: CounterStore,
  budgets: readonly ActiveBudget[],
  valueOf: ValueOf,
  estimate: Estimate = () => 0,
  now = Date.now(),
): Promise<BudgetSlot[]> {
  const selected = budgets.filter((budget) => selects(budget, valueOf)).map((budget) => ({ budget, slot: slotOfBudget(budget, valueOf, now) }));
  for (const { budget, slot } of selected) if (spentBuckets.has(spentKey(budget, slot))) throw budgetExceeded(budget, slot, true);
  const claims = await Promise.allSettled(
    selected.map(({ budget, slot }) =>
      counters.claim(usageCounter(slot), Math.max(0, Math.round(estimate(budget))), counterUnits(budget.type, budget.creditLimit), now),
    ),
  );
  const reserved: BudgetSlot[] = [];
  let refusal: Error | undefined;
  claims.forEach((result, index) => {
    const { budget, slot } = selected[index]!;
    if (result.status === 'rejected') return void (refusal ??= result.reason as Error);
    const claimed = result.value;
    if (claimed.admitted) return void reserved.push({ budget, slot, reservation: claimed.reservation });
    const spent = claimed.settled >= counterUnits(budget.type, budget.creditLimit);
    if (spent) rememberSpent(budget, slot);
    refusal ??= budgetExceeded(budget, slot, spent);
  });
  if (!refusal) return reserved;
  await releaseBudgets(counters, reserved);
  throw refusal;
}

/** Throws the 412 of a budget whose bucket this container already knows is spent (no I/O). */
export function refuseSpent(budgets: readonly ActiveBudget[], valueOf: ValueOf, now = Date.now()): void {
  for (const budget of budgets) {
    if (!selects(budget, valueOf)) continue;
    const slot = slotOfBudget(budget, valueOf, now);
    if (spentBuckets.has(spentKey(budget, slot))) throw budgetExceeded(budget, slot, true);
  }
}

/** Lets reservations go unused (a refused request, an attempt a fallback replaced). */
export function releaseBudgets(counters: CounterStore, slots: readonly BudgetSlot[]): Promise<unknown> {
  return Promise.all(slots.map(({ slot, reservation }) => settleUsage(counters, slot, reservation, 0)));
}

/**
 * Buckets this container has seen spent, so a client that goes on sending after its budget is
 * used up costs no writes. Exact: a period's settled usage only grows, and the key holds the limit
 * and the period, so a raised limit or a new period is a new key. Bounded, oldest first out.
 */
const spentBuckets = new Set<string>();
const maxSpentBuckets = 10_000;
const spentKey = (budget: ActiveBudget, slot: UsageSlot) => `${budget.id}\n${budget.type}\n${budget.creditLimit}\n${slot.periodStart}\n${slot.bucket}`;

function rememberSpent(budget: ActiveBudget, slot: UsageSlot): void {
  if (spentBuckets.size >= maxSpentBuckets) spentBuckets.delete(spentBuckets.values().next().value!);
  spentBuckets.add(spentKey(budget, slot));
}

/** The 412: a bucket spent, or one whose requests under way hold what is left of it. */
function budgetExceeded(budget: ActiveBudget, slot: UsageSlot, spent: boolean): BudgetExceededError {
  const limit = budget.type === 'cost' ? `$${budget.creditLimit}` : `${budget.creditLimit} tokens`;
  if (!spent)
    return new BudgetExceededError(
      `Budget exhausted: usage-limit policy ${budget.id} allows ${limit}, and requests under way have reserved what is left of it. Try again when they finish.`,
      budget.id,
    );
  const reset = slot.periodEnd === undefined ? 'It does not reset.' : `It resets at ${new Date(slot.periodEnd).toISOString()}.`;
  return new BudgetExceededError(`Budget exhausted: usage-limit policy ${budget.id} allows ${limit} and has been used up. ${reset}`, budget.id);
}

/** What a finished request spent, in each budget type's units. */
export interface Spend {
  tokens: number;
  /** USD; null when a model that spent tokens has no price (a cost budget then counts 0). */
  cost: number | null;
}

/**
 * Settles each reservation with what the request spent (the rest is released), and raises each
 * bucket's alert once per period.
 */
export async function countSpend(counters: CounterStore, slots: readonly BudgetSlot[], spend: Spend, now = Date.now()): Promise<void> {
  await Promise.all(
    slots.map(async ({ budget, slot, reservation }) => {
      const amount = budget.type === 'cost' ? counterUnits('cost', spend.cost ?? 0) : spend.tokens;
      const total = await settleUsage(counters, slot, reservation, Math.max(0, amount), now);
      if (amount <= 0) return;
      if (total >= counterUnits(budget.type, budget.creditLimit)) rememberSpent(budget, slot);
      if (budget.alertThreshold === undefined || total < counterUnits(budget.type, budget.alertThreshold)) return;
      if (await counters.markAlerted(slot, now)) emitBudgetAlert(budget, slot, budgetUnits(budget.type, total), now);
    }),
  );
}

/** Nothing reserved and nothing spent needs no write. */
function settleUsage(counters: CounterStore, slot: UsageSlot, reservation: Reservation, used: number, now = Date.now()): Promise<number> {
  if (reservation.amount === 0 && used === 0) return Promise.resolve(0);
  return counters.settle(usageCounter(slot), reservation, used, now);
}

/** Filter pattern of a budget alert in the process log (a metric filter or subscription can pick it up). */
export const budgetAlertType = 'gateway.usage_limit_alert';

function emitBudgetAlert(budget: ActiveBudget, slot: UsageSlot, usage: number, now: number): void {
  const record = {
    type: budgetAlertType,
    policy_id: budget.id,
    workspace_id: budget.workspaceId,
    budget_type: budget.type,
    group: slot.group,
    usage,
    alert_threshold: budget.alertThreshold,
    credit_limit: budget.creditLimit,
    period_start: new Date(slot.periodStart).toISOString(),
    next_usage_reset_at: slot.periodEnd === undefined ? null : new Date(slot.periodEnd).toISOString(),
    created_at: new Date(now).toISOString(),
  };
  process.stdout.write(JSON.stringify(record) + '\n');
}
