import { breakerIdentity } from '../../routing/circuit-breaker';
import { runStrategy } from '../../routing/engine';
import type { ResolvedTarget } from '../../providers/types';
import type { RequestStep, TargetAttempt } from '../context';
import { runSteps, setByStep } from '../steps';
import { targetSteps } from './target-steps';

/**
 * `strategy`: walks the config's strategy tree (fallback, loadbalance, conditional, retries and
 * circuit breakers), and sends each attempt at a target through the target steps of the request's kind.
 */
export const routeStrategy: RequestStep = {
  name: 'strategy',
  async run(context) {
    const { request } = context;
    const plan = setByStep(context.plan, 'config');
    const steps = targetSteps[request.kind];
    // The target of each leaf tried, so the result can say which one answered.
    const reached = new Map<string, ResolvedTarget | undefined>();
    const routing = await runStrategy(plan.root, {
      identity: breakerIdentity(request.caller.workspaceId, plan.identity),
      breakers: context.stores.breakers,
      query: { metadata: request.metadata, params: request.kind === 'unified' ? request.body : {}, url: { pathname: request.path } },
      waitUntil: context.waitUntil,
      // Every field the target steps set, present from the start: one shape for every attempt.
      attempt: (leaf) => {
        const attempt: TargetAttempt = {
          inference: context,
          leaf,
          target: undefined,
          timeout: undefined,
          body: undefined,
          shaping: undefined,
          answerChecked: undefined,
        };
        const startedAt = performance.timeOrigin + performance.now();
        const ended = (status: number) => {
          reached.set(leaf.path, attempt.target);
          // An attempt refused before its target was resolved has no provider to name.
          if (attempt.target) {
            const model = attempt.body?.model;
            context.recorder.attemptEnded({
              provider: attempt.target.provider.name,
              model: typeof model === 'string' ? model : undefined,
              startedAt,
              endedAt: performance.timeOrigin + performance.now(),
              status,
            });
          }
        };
        return runSteps(steps, attempt).then(
          (outcome) => {
            ended(outcome.status);
            return outcome;
          },
          (error) => {
            ended(typeof error?.status === 'number' ? error.status : 0);
            throw error;
          },
        );
      },
    });
    context.recorder.cached(context.cacheStatus);
    return {
      outcome: routing.outcome,
      path: routing.path,
      retries: routing.retries,
      cacheStatus: context.cacheStatus,
      usage: context.usage,
      target: reached.get(routing.path),
    };
  },
};
