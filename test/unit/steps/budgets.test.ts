/**
 * The `budgets` steps over in-memory stores: a token budget reserves before routing and settles
 * what the request spent once it finishes, a spent bucket refuses with 412 (at the request, or as
 * one attempt's answer for a budget on a target key), the alert is raised once, and one workspace's
 * budgets never count another's requests.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BudgetExceededError } from '../../../lib/budgets/enforce';
import { memoryStores, type MemoryStores } from '../../../lib/inference/memory-stores';
import { requestBudgetStep, targetBudgetStep } from '../../../lib/inference/steps/budgets';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { resolveTargetStep } from '../../../lib/inference/steps/resolve-target';
import { usageCounter } from '../../../lib/store/usage-counters';
import { attemptAt, chatRequest, nextAnswering, okOutcome, okResult, stepContext, testCaller } from '../../support/step-context';

const target = { provider: 'openai', api_key: 'sk-test' };
const everyRequest = { conditions: [], group_by: [] };

let stores: MemoryStores;
beforeEach(() => {
  stores = memoryStores();
});
afterEach(() => vi.restoreAllMocks());

/** Runs the request step and finishes the request as a worker would, having spent `tokens`. */
async function spend(tokens: number, workspaceId = testCaller.workspaceId) {
  const step = stepContext(chatRequest(target, { caller: { ...testCaller, workspaceId } }), stores);
  const next = nextAnswering(() => {
    step.context.recorder.usedTokens({ prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens });
    return okResult();
  });
  await requestBudgetStep.run(step.context, next);
  await step.context.finish({ status: 200 });
  await step.settled();
  return { ...step, next };
}

const settledOn = (context: { budgets?: { requestSlots: { slot: Parameters<typeof usageCounter>[0] }[] } }) =>
  stores.counters.settled(usageCounter(context.budgets!.requestSlots[0]!.slot));

describe('the request step', () => {
  it('passes a workspace without budgets untouched', async () => {
    const { context, next } = await spend(10);
    expect(next.calls).toBe(1);
    expect(context.budgets).toBeUndefined();
  });

  it("counts a token budget's spend once the request finishes, and refuses with 412 once it is used up", async () => {
    const budget = stores.policies.saveBudget(testCaller.workspaceId, { name: 'tokens', type: 'tokens', credit_limit: 100, ...everyRequest });
    const first = await spend(60);
    expect(settledOn(first.context)).toBe(60);
    const second = await spend(50);
    expect(settledOn(second.context)).toBe(110);

    const refused = stepContext(chatRequest(target), stores);
    const next = nextAnswering(okResult);
    const error = await requestBudgetStep.run(refused.context, next).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(error).toMatchObject({ status: 412, policyId: budget.id });
    expect((error as Error).message).toContain('has been used up');
    expect(next.calls).toBe(0);
    await refused.context.finish({ status: 412 });
    expect(refused.records[0]).toMatchObject({ usage_limit_policy_id: budget.id, status: 412 });
  });

  it("counts nothing for another workspace's requests", async () => {
    stores.policies.saveBudget(testCaller.workspaceId, { name: 'tokens', type: 'tokens', credit_limit: 10, ...everyRequest });
    const elsewhere = await spend(500, 'ws_other');
    expect(elsewhere.context.budgets).toBeUndefined();
    expect(settledOn((await spend(5)).context)).toBe(5);
  });

  it('releases the whole reservation of a request that spent nothing', async () => {
    stores.policies.saveBudget(testCaller.workspaceId, { name: 'tokens', type: 'tokens', credit_limit: 1_000, ...everyRequest });
    const { context } = await spend(0);
    const counter = usageCounter(context.budgets!.requestSlots[0]!.slot);
    expect(context.budgets!.requestSlots[0]!.reservation.amount).toBeGreaterThan(0);
    expect(stores.counters.settled(counter)).toBe(0);
    // Released, not only settled: the whole limit is open to the next request's reservation.
    expect(await stores.counters.claim(counter, 1_000, 1_000)).toMatchObject({ admitted: true, total: 1_000 });
  });

  it('raises the alert once a bucket passes its threshold, and only once', async () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const budget = stores.policies.saveBudget(testCaller.workspaceId, {
      name: 'alerting',
      type: 'tokens',
      credit_limit: 1_000,
      alert_threshold: 50,
      ...everyRequest,
    });
    await spend(30);
    await spend(30);
    await spend(30);
    const alerts = write.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('"gateway.usage_limit_alert"'));
    expect(alerts).toHaveLength(1);
    expect(JSON.parse(alerts[0]!)).toMatchObject({ policy_id: budget.id, usage: 60, alert_threshold: 50, workspace_id: testCaller.workspaceId });
  });
});

describe('the target step', () => {
  it("refuses an attempt at a model whose budget is spent as that attempt's 412, without calling the provider", async () => {
    const budget = stores.policies.saveBudget(testCaller.workspaceId, {
      name: 'per model',
      type: 'tokens',
      credit_limit: 20,
      conditions: [{ key: 'model', value: 'gpt-4o-mini' }],
      group_by: [],
    });
    const attempt = async (tokens: number) => {
      const step = stepContext(chatRequest(target), stores);
      await resolveConfig.run(step.context, () => requestBudgetStep.run(step.context, async () => okResult()));
      const attempted = attemptAt(step.context, target);
      await resolveTargetStep.run(attempted, async () => okOutcome());
      const next = nextAnswering(() => {
        step.context.recorder.usedTokens({ prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens });
        return okOutcome();
      });
      const outcome = await targetBudgetStep.run(attempted, next);
      await step.context.finish({ status: outcome.status });
      await step.settled();
      return { outcome, next };
    };
    expect((await attempt(25)).outcome.ok).toBe(true);
    const refused = await attempt(0);
    expect(refused.next.calls).toBe(0);
    expect(refused.outcome).toMatchObject({ ok: false, status: 412, network: false });
    expect(!refused.outcome.ok && refused.outcome.error).toMatchObject({ policyId: budget.id });
  });
});
