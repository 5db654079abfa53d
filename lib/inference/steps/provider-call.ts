import type { JsonObject, ProviderCall } from '../../providers/types';
import type { PlanNode } from '../../routing/plan';
import type { UnifiedRequest } from '../inference-request';
import { attemptProvider } from '../provider-attempt';
import { forwardedHeaders } from '../request-options';
import type { TargetStep } from '../run-inference';
import { setByStep } from '../steps';

/** The body as this target's provider gets it: the client's, with the target's `override_params` over it. */
export function bodyForTarget(request: UnifiedRequest, leaf: PlanNode): JsonObject {
  const overrides = leaf.settings.override_params;
  return overrides ? { ...request.body, ...overrides } : request.body;
}

/** `call` on the unified routes: the OpenAI-format request, with the target's overrides, through the provider's adapter. */
export const providerCallStep: TargetStep = {
  name: 'call',
  run(attempt) {
    const { inference, leaf } = attempt;
    const request = inference.request;
    if (request.kind !== 'unified') throw new Error('The provider call step serves the unified routes.');
    const target = setByStep(attempt.target, 'target');
    const overrides = leaf.settings.override_params;
    const forwardNames = leaf.settings.forward_headers ? [...leaf.settings.forward_headers, ...request.options.forwardHeaderNames] : request.options.forwardHeaderNames;
    const call: ProviderCall = {
      operation: request.operation,
      body: bodyForTarget(request, leaf),
      clientBytes: overrides ? undefined : request.clientBytes,
      stream: request.stream,
      target,
      forwardHeaders: forwardedHeaders(request.headers, forwardNames),
      requestHeaders: request.headers,
      strictApiCompliance: leaf.settings.strict_api_compliance ?? true,
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
