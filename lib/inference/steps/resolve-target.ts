import type { TargetStep } from '../context';
import { setByStep } from '../steps';

/** `target`: the provider, base URL and credentials of the target (resolved once per request, whatever the retries). */
export const resolveTargetStep: TargetStep = {
  name: 'target',
  run(attempt, next) {
    const targetOf = setByStep(attempt.inference.targetOf, 'config');
    return targetOf(attempt.leaf).then((target) => {
      attempt.target = target;
      attempt.inference.recorder.attempted(target.provider.name);
      return next();
    });
  },
};
