/**
 * What a unit test of one step needs: a request as the constructor makes it, its context over
 * in-memory stores with the log records kept, one attempt at a leaf of its plan, and a `next` that
 * stands for the steps after the one under test.
 */
import type { GatewayConfig } from '../../lib/config/types';
import type { InferenceContext, InferenceResult, TargetAttempt } from '../../lib/inference/context';
import { inferenceRequest, type InferenceCaller, type UnifiedRequest } from '../../lib/inference/inference-request';
import { memoryStores, type MemoryStores } from '../../lib/inference/memory-stores';
import { inferenceContext } from '../../lib/inference/run-inference';
import type { RequestLogRecord } from '../../lib/observability/request-log';
import type { JsonObject } from '../../lib/providers/types';
import type { AttemptOutcome } from '../../lib/routing/attempt-outcome';
import { buildPlan, leavesOf, type PlanNode } from '../../lib/routing/plan';

export const testCaller: InferenceCaller = { organisationId: 'org_steps', workspaceId: 'ws_steps', keyId: 'key_steps' };

/** A chat request with an inline config, as a worker makes one; `body` and the rest override the defaults. */
export function chatRequest(
  config: GatewayConfig | undefined,
  extra: Partial<Pick<UnifiedRequest, 'caller' | 'metadata' | 'promptId'>> & { body?: JsonObject; options?: Partial<UnifiedRequest['options']> } = {},
): UnifiedRequest {
  return inferenceRequest({
    kind: 'unified',
    operation: 'chat',
    body: extra.body ?? { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
    caller: extra.caller ?? testCaller,
    metadata: extra.metadata,
    promptId: extra.promptId,
    options: { ...(config ? { config: { kind: 'inline', config } } : {}), ...extra.options },
  });
}

export interface StepContext {
  context: InferenceContext;
  stores: MemoryStores;
  /** The log records the context's recorder wrote. */
  records: RequestLogRecord[];
  /** Deferred work handed to `waitUntil`, settled: what a test awaits before reading the stores. */
  settled(): Promise<void>;
}

/** The request's context over in-memory stores (fresh ones unless given). */
export function stepContext(request: UnifiedRequest | Parameters<typeof inferenceContext>[0], stores: MemoryStores = memoryStores()): StepContext {
  const records: RequestLogRecord[] = [];
  const deferred: Promise<unknown>[] = [];
  const context = inferenceContext(request, { stores, logSink: (record) => records.push(record), waitUntil: (work) => deferred.push(work) });
  return {
    context,
    stores,
    records,
    async settled() {
      while (deferred.length > 0) await Promise.allSettled(deferred.splice(0));
    },
  };
}

/** One attempt at the plan's leaf `index` (its config's first target by default), with no target step run yet. */
export function attemptAt(context: InferenceContext, config: GatewayConfig, index = 0): TargetAttempt {
  const leaf: PlanNode = leavesOf(buildPlan(config))[index]!;
  return { inference: context, leaf, target: undefined, timeout: undefined, body: undefined, shaping: undefined, answerChecked: undefined };
}

/** The answer of the steps after the one under test, with how often they were reached. */
export function nextAnswering<T>(answer: () => T | Promise<T>) {
  const next = Object.assign(
    async () => {
      next.calls++;
      return answer();
    },
    { calls: 0 },
  );
  return next;
}

/** A chat completion in OpenAI's shape that answers `content`; `extra` adds fields (usage). */
export const chatCompletion = (content: string, extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-unit',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  ...extra,
});

/** A provider's whole 200 answer; `body` is JSON-encoded unless it is a string. */
export const okOutcome = (body: unknown = { id: 'chatcmpl-test', object: 'chat.completion', choices: [] }): AttemptOutcome => ({
  ok: true,
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});

export const okResult = (outcome: AttemptOutcome = okOutcome()): InferenceResult => ({ outcome, path: 'config', retries: 0, cacheStatus: 'DISABLED' });
