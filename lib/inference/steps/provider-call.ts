import type { ProviderCall } from '../../providers/types';
import { attemptBody, attemptShaping } from '../attempt';
import type { TargetStep } from '../context';
import { attemptProvider } from '../provider-attempt';
import { setByStep } from '../steps';

/** `call` on the unified routes: the OpenAI-format request, with the target's overrides, through the provider's adapter. */
export const providerCallStep: TargetStep = {
  name: 'call',
  run(attempt) {
    const { inference } = attempt;
    const request = inference.request;
    if (request.kind !== 'unified') throw new Error('The provider call step serves the unified routes.');
    const target = setByStep(attempt.target, 'target');
    const body = attemptBody(attempt);
    const call: ProviderCall = {
      operation: request.operation,
      body,
      // The client's bytes are sent as they are only while nothing changed the body.
      clientBytes: body === request.body ? request.clientBytes : undefined,
      stream: request.stream,
      target,
      requestHeaders: request.headers,
      responsesChain: request.responsesChain,
      ...attemptShaping(attempt, request),
    };
    inference.recorder.sentModel(call.body.model);
    return attemptProvider(call, setByStep(attempt.timeout, 'timeout'), {
      onUsage(usage) {
        inference.usage = usage;
        inference.recorder.usedTokens(usage);
      },
      onStreamError: (error) => inference.recorder.failed(error),
    });
  },
};
