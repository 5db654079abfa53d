/**
 * The `rate-limits` steps over in-memory stores: which policies apply to a request and to one
 * target attempt, what a refusal looks like at each, and how a token policy reserves before the
 * provider is called and settles with the answer's tokens once the request finishes.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { TargetAttempt } from '../../../lib/inference/context';
import { memoryStores, type MemoryStores } from '../../../lib/inference/memory-stores';
import { requestRateLimitStep, targetRateLimitStep } from '../../../lib/inference/steps/rate-limits';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { resolveTargetStep } from '../../../lib/inference/steps/resolve-target';
import { RateLimitedError } from '../../../lib/ratelimit/enforce';
import { forgetBudgets } from '../../../lib/ratelimit/limiter';
import { tokenCounter } from '../../../lib/store/rate-counters';
import { attemptAt, chatRequest, nextAnswering, okOutcome, okResult, stepContext, testCaller } from '../../support/step-context';

const target = { provider: 'openai', api_key: 'sk-test' };
const everyRequest = { conditions: [], group_by: [] };

let stores: MemoryStores;
beforeEach(() => {
  stores = memoryStores();
  // Chunks of request windows are kept per process by policy id; each test's policies are new.
  forgetBudgets();
});

/** Runs the request step once over the shared stores; `tokens` is what the answer used. */
async function runRequest(tokens = 0, workspaceId = testCaller.workspaceId) {
  const step = stepContext(chatRequest(target, { caller: { ...testCaller, workspaceId } }), stores);
  const next = nextAnswering(() => {
    if (tokens > 0) step.context.recorder.usedTokens({ prompt_tokens: tokens, completion_tokens: 0, total_tokens: tokens });
    return okResult();
  });
  const result = await requestRateLimitStep.run(step.context, next);
  return { ...step, result, next };
}

describe('the request step', () => {
  it('passes a workspace without policies untouched', async () => {
    const { context, result, next } = await runRequest();
    expect(next.calls).toBe(1);
    expect(context.rateLimits).toBeUndefined();
    expect(Object.keys(result.outcome.headers).filter((name) => name.startsWith('x-ratelimit-'))).toEqual([]);
  });

  it("admits a window's limit, answers with its headers, and refuses the next with 429 and no provider call", async () => {
    const policy = stores.policies.saveRateLimit(testCaller.workspaceId, { type: 'requests', unit: 'rpm', value: 2, ...everyRequest });
    const remaining: string[] = [];
    for (let i = 0; i < 2; i++) remaining.push((await runRequest()).result.outcome.headers['x-ratelimit-remaining-requests']!);
    expect(remaining).toEqual(['1', '0']);

    const refused = stepContext(chatRequest(target), stores);
    const next = nextAnswering(okResult);
    const error = await requestRateLimitStep.run(refused.context, next).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ status: 429, policyId: policy.id, headers: { 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0' } });
    expect(next.calls).toBe(0);
    await refused.context.finish({ status: 429 });
    expect(refused.records[0]).toMatchObject({ rate_limit_policy_id: policy.id, workspace_id: testCaller.workspaceId });
  });

  it("applies one workspace's policies to that workspace only", async () => {
    stores.policies.saveRateLimit(testCaller.workspaceId, { type: 'requests', unit: 'rpm', value: 1, ...everyRequest });
    await runRequest();
    await expect(runRequest()).rejects.toBeInstanceOf(RateLimitedError);
    const elsewhere = await runRequest(0, 'ws_other');
    expect(elsewhere.next.calls).toBe(1);
    expect(elsewhere.context.rateLimits).toBeUndefined();
  });

  it("reserves a token policy's estimate before the call and settles the answer's tokens once the request finishes", async () => {
    stores.policies.saveRateLimit(testCaller.workspaceId, { type: 'tokens', unit: 'rph', value: 10_000, ...everyRequest });
    const { context, settled } = await runRequest(42);
    const [reserved] = context.rateLimits!.requestTokens;
    const counter = tokenCounter(reserved!.slot);
    expect(reserved!.reservation.amount).toBeGreaterThan(0);
    // Reserved, not spent: nothing is settled until the request finishes.
    expect(stores.counters.settled(counter)).toBe(0);
    await context.finish({ status: 200 });
    await settled();
    expect(stores.counters.settled(counter)).toBe(42);
  });

  it('refuses a token policy whose window is spent', async () => {
    stores.policies.saveRateLimit(testCaller.workspaceId, { type: 'tokens', unit: 'rpm', value: 50, ...everyRequest });
    const first = await runRequest(60);
    await first.context.finish({ status: 200 });
    await first.settled();
    await expect(runRequest()).rejects.toMatchObject({ status: 429, headers: { 'x-ratelimit-remaining-tokens': '0' } });
  });
});

describe('the target step', () => {
  /** An attempt whose request step ran (policies read) and whose target is resolved. */
  async function attemptFor(): Promise<TargetAttempt> {
    const { context } = stepContext(chatRequest(target), stores);
    await resolveConfig.run(context, () => requestRateLimitStep.run(context, async () => okResult()));
    const attempt = attemptAt(context, target);
    await resolveTargetStep.run(attempt, async () => okOutcome());
    return attempt;
  }

  it("refuses an attempt at a provider a policy names as that attempt's 429, which a fallback may route around", async () => {
    const policy = stores.policies.saveRateLimit(testCaller.workspaceId, {
      type: 'requests',
      unit: 'rpm',
      value: 1,
      conditions: [{ key: 'provider', value: 'openai' }],
      group_by: [],
    });
    const first = await attemptFor();
    expect((await targetRateLimitStep.run(first, async () => okOutcome())).ok).toBe(true);
    const second = await attemptFor();
    const next = nextAnswering(okOutcome);
    const outcome = await targetRateLimitStep.run(second, next);
    expect(next.calls).toBe(0);
    expect(outcome).toMatchObject({ ok: false, status: 429, network: false, headers: { 'x-ratelimit-limit-requests': '1' } });
    expect(!outcome.ok && outcome.error).toMatchObject({ policyId: policy.id });
  });

  it('leaves an attempt alone when no policy names a target key', async () => {
    stores.policies.saveRateLimit(testCaller.workspaceId, { type: 'requests', unit: 'rpm', value: 100, ...everyRequest });
    const attempt = await attemptFor();
    expect(attempt.inference.rateLimits!.targetPolicies).toEqual([]);
    const next = nextAnswering(okOutcome);
    await targetRateLimitStep.run(attempt, next);
    expect(next.calls).toBe(1);
  });
});
