import { drain, type DeferredWork } from '../core/deferred-work';
import { newId } from '../core/ids';
import { parseConfigRef } from '../config/saved-configs';
import { RequestRecorder } from '../observability/request-recorder';
import type { InferenceContext, InferenceEnvironment, InferenceResult, RequestStep } from './context';
import type { InferenceRequest } from './inference-request';
import { runSteps } from './steps';
import { storedState } from './stores';
import { requestBudgetStep } from './steps/budgets';
import { requestHooksStep } from './steps/hooks';
import { requestRateLimitStep } from './steps/rate-limits';
import { resolveConfig } from './steps/resolve-config';
import { routeStrategy } from './steps/route-strategy';

/**
 * What every request goes through, in order. Steps that need the whole request (rate limits,
 * guardrails, accounting) join this list; steps per target attempt join `targetSteps`.
 */
export const requestSteps: readonly RequestStep[] = [resolveConfig, requestRateLimitStep, requestBudgetStep, requestHooksStep, routeStrategy];

export function inferenceContext(request: InferenceRequest, environment: InferenceEnvironment = {}): InferenceContext {
  const recorder = environment.recorder ?? new RequestRecorder(newId('log'), environment.logSink);
  const config = request.options.config;
  recorder.requestedBy(request.caller, request.metadata, config.kind === 'saved' ? parseConfigRef(config.ref)?.id : undefined);
  if (request.kind === 'unified') recorder.requested({ stream: request.stream, model: request.body.model });
  const deferred: DeferredWork = [];
  const handOver = environment.waitUntil;
  return {
    request,
    recorder,
    stores: environment.stores ? { ...storedState, ...environment.stores } : storedState,
    waitUntil: handOver ? (work) => handOver(work) : (work) => void deferred.push(work),
    cacheStatus: 'DISABLED',
    // Every field the steps set, present from the start: one object shape for every request, so
    // the steps' property reads stay monomorphic whichever steps ran.
    usage: undefined,
    plan: undefined,
    targetOf: undefined,
    hookResults: undefined,
    inputBody: undefined,
    inputFlagged: undefined,
    rateLimits: undefined,
    budgets: undefined,
    cacheEmbeddings: undefined,
    async finish(end) {
      const method = request.kind === 'passthrough' ? request.method : 'POST';
      recorder.finish({ method, path: request.path, status: end.status, requestId: end.requestId ?? recorder.id, traceId: end.traceId ?? recorder.id });
      await recorder.written;
      await drain(deferred);
    },
  };
}

/**
 * Runs one inference request through the request steps: the transport-free core that live routes,
 * prompt runs and workers call. Request errors (a bad config, an unknown
 * provider) reject; a provider's failure is an answer, in the result.
 */
export function runInference(context: InferenceContext): Promise<InferenceResult> {
  return runSteps(requestSteps, context);
}
