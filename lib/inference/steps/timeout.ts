import { AttemptTimeout } from '../provider-body';
import { defaultRequestTimeoutMs } from '../request-options';
import type { TargetStep } from '../context';
import { setByStep } from '../steps';

/**
 * `timeout`: the attempt's request timeout (the request's own, else the target's `request_timeout`,
 * else 10 minutes). It runs until the call has its answer (a stream's first chunk, a whole body);
 * when it runs out it aborts the call, which then answers 408.
 */
export const timeoutStep: TargetStep = {
  name: 'timeout',
  async run(attempt, next) {
    const provider = setByStep(attempt.target, 'target').provider.name;
    const timeoutMs = attempt.inference.request.options.timeoutMs ?? attempt.leaf.settings.request_timeout ?? defaultRequestTimeoutMs;
    const timeout = (attempt.timeout = new AttemptTimeout(provider, timeoutMs));
    try {
      return await next();
    } finally {
      timeout.stop();
    }
  },
};
