/*
 * What one attempt at a target sends: its body and what else shapes the provider's answer. The
 * steps that read or change them (hooks, cache, call) use these, so the attempt's `body` and
 * `shaping` are written here only.
 */
import type { AnswerShaping } from '../cache/cache-key';
import type { JsonObject } from '../providers/types';
import type { TargetAttempt } from './context';
import type { UnifiedRequest } from './inference-request';
import { forwardedHeaders } from './request-options';

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
  return (attempt.shaping = {
    forwardHeaders: forwardedHeaders(request.headers, names),
    strictApiCompliance: settings.strict_api_compliance ?? request.options.strictApiCompliance ?? true,
  });
}

/** The body after the target's own input mutators rewrote it: what the cache and the call see from now on. */
export function replaceAttemptBody(attempt: TargetAttempt, body: JsonObject): void {
  attempt.body = body;
}
