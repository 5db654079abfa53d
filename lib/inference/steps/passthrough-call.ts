import { forwardToProvider } from '../passthrough-forward';
import type { TargetStep } from '../context';
import { setByStep } from '../steps';

/** `call` on pass-through: the client's method, path, query and bytes, sent to the target as they are. */
export const passthroughCallStep: TargetStep = {
  name: 'call',
  run(attempt) {
    const { inference } = attempt;
    const request = inference.request;
    if (request.kind !== 'passthrough') throw new Error('The pass-through call step serves pass-through requests.');
    return forwardToProvider(request, setByStep(attempt.target, 'target'), setByStep(attempt.timeout, 'timeout'), {
      // Without a config nothing is retried, so even an error body streams through untouched.
      holdErrors: setByStep(inference.plan, 'config').fromConfig,
      onStall: (error) => inference.recorder.failed(error),
    });
  },
};
