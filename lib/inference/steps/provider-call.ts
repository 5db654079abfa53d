import type { AnswerShaping } from '../../cache/cache-key';
import type { JsonObject, ProviderCall } from '../../providers/types';
import type { UnifiedRequest } from '../inference-request';
import { attemptProvider } from '../provider-attempt';
import { forwardedHeaders } from '../request-options';
import type { TargetAttempt, TargetStep } from '../run-inference';
import { setByStep } from '../steps';

/**
 * The body as this target's provider gets it: the client's (as the request's input mutators left
 * it), with the target's `override_params` over it, then as the target's own input mutators left it.
 */
export function attemptBody(attempt: TargetAttempt): JsonObject {
  if (attempt.body) return attempt.body;
  const request = attempt.inference.request as UnifiedRequest;
  const base = attempt.inference.inputBody ?? request.body;
  const overrides = attempt.leaf.settings.override_params;
  return (attempt.body = overrides ? { ...base, ...overrides } : base);
}

/**
 * What else of an attempt shapes the provider's answer besides its body: the client headers the
 * target forwards, and whether the answer keeps to the OpenAI schema (`strict_api_compliance`).
 */
export function attemptShaping(attempt: TargetAttempt, request: UnifiedRequest): AnswerShaping {
  if (attempt.shaping) return attempt.shaping;
  const { settings } = attempt.leaf;
  const names = settings.forward_headers ? [...settings.forward_headers, ...request.options.forwardHeaderNames] : request.options.forwardHeaderNames;
  return (attempt.shaping = { forwardHeaders: forwardedHeaders(request.headers, names), strictApiCompliance: settings.strict_api_compliance ?? true });
}

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
