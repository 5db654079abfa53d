/**
 * Applying budgets to a request: which budgets select it, which bucket and period it falls in,
 * whether that bucket has usage left, and after the answer, adding what the request spent and
 * raising the period's alert once.
 */
import { GatewayError } from '../core/errors';
import { bucketOf, selects, type ValueOf } from '../ratelimit/enforce';
import { addUsage, markAlerted, readUsage, type UsageSlot } from '../store/usage-counters';
import { periodAt } from './periods';
import type { ActiveBudget } from './policies';

/** Cost is counted in whole nano-dollars: integer sums stay exact however many requests add to them. */
export const nanoUsdPerUsd = 1_000_000_000;

/** A budget's limit in the units its counter holds. */
export const counterUnits = (type: ActiveBudget['type'], amount: number) => (type === 'cost' ? Math.round(amount * nanoUsdPerUsd) : amount);
/** A counter's units as the budget's own (USD or tokens). */
export const budgetUnits = (type: ActiveBudget['type'], units: number) => (type === 'cost' ? units / nanoUsdPerUsd : units);

/** A bucket a request fell in, and the budget that made it: what the answer's spend is added to. */
export interface BudgetSlot {
  budget: ActiveBudget;
  slot: UsageSlot;
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

/**
 * Checks every budget that selects the request against its bucket's usage in the current period;
 * throws the 412 of the first one spent, or answers the buckets to add the answer's spend to.
 */
export async function enforceBudgets(budgets: readonly ActiveBudget[], valueOf: ValueOf, now = Date.now()): Promise<BudgetSlot[]> {
  const selected = budgets.filter((budget) => selects(budget, valueOf)).map((budget) => ({ budget, slot: slotOfBudget(budget, valueOf, now) }));
  for (const { budget, slot } of selected) if (spentBuckets.has(spentKey(budget, slot))) throw budgetExceeded(budget, slot);
  const used = await Promise.all(selected.map(({ slot }) => readUsage(slot)));
  selected.forEach(({ budget, slot }, index) => {
    if (used[index]! >= counterUnits(budget.type, budget.creditLimit)) {
      rememberSpent(budget, slot);
      throw budgetExceeded(budget, slot);
    }
  });
  return selected;
}

/**
 * Buckets this container has seen spent, so a client that goes on sending after its budget is
 * used up costs no reads. Exact: a period's usage only grows, and the key holds the limit and the
 * period, so a raised limit or a new period is a new key. Bounded, oldest first out.
 */
const spentBuckets = new Set<string>();
const maxSpentBuckets = 10_000;
const spentKey = (budget: ActiveBudget, slot: UsageSlot) => `${budget.id}\n${budget.type}\n${budget.creditLimit}\n${slot.periodStart}\n${slot.bucket}`;

function rememberSpent(budget: ActiveBudget, slot: UsageSlot): void {
  if (spentBuckets.size >= maxSpentBuckets) spentBuckets.delete(spentBuckets.values().next().value!);
  spentBuckets.add(spentKey(budget, slot));
}

function budgetExceeded(budget: ActiveBudget, slot: UsageSlot): BudgetExceededError {
  const limit = budget.type === 'cost' ? `$${budget.creditLimit}` : `${budget.creditLimit} tokens`;
  const reset = slot.periodEnd === undefined ? 'It does not reset.' : `It resets at ${new Date(slot.periodEnd).toISOString()}.`;
  return new BudgetExceededError(`Budget exhausted: usage-limit policy ${budget.id} allows ${limit} and has been used up. ${reset}`, budget.id);
}

/** What a finished request spent, in each budget type's units. */
export interface Spend {
  tokens: number;
  /** USD; null when a model that spent tokens has no price (a cost budget then counts 0). */
  cost: number | null;
}

/** Adds a request's spend to every bucket that selected it, and raises each bucket's alert once per period. */
export async function countSpend(slots: readonly BudgetSlot[], spend: Spend, now = Date.now()): Promise<void> {
  await Promise.all(
    slots.map(async ({ budget, slot }) => {
      const amount = budget.type === 'cost' ? counterUnits('cost', spend.cost ?? 0) : spend.tokens;
      if (amount <= 0) return;
      const total = await addUsage(slot, amount);
      if (total >= counterUnits(budget.type, budget.creditLimit)) rememberSpent(budget, slot);
      if (budget.alertThreshold === undefined || total < counterUnits(budget.type, budget.alertThreshold)) return;
      if (await markAlerted(slot, now)) emitBudgetAlert(budget, slot, budgetUnits(budget.type, total), now);
    }),
  );
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
