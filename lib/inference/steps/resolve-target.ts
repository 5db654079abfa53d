import type { TargetStep } from '../run-inference';
import { setByStep } from '../steps';

/** `target`: the provider, base URL and credentials of the target (resolved once per request, whatever the retries). */
export const resolveTargetStep: TargetStep = {
  name: 'target',
  async run(attempt, next) {
    const targetOf = setByStep(attempt.inference.targetOf, 'config');
    attempt.target = await targetOf(attempt.leaf);
    attempt.inference.recorder.attempted(attempt.target.provider.name);
    return next();
  },
};
