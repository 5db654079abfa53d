/*
 * What policies (rate limits and budgets) read of a request and of one target attempt: the values
 * their conditions and groups name, the model asked for, and what the request may spend in tokens.
 * Both policy steps use them, so they live here rather than in either step.
 */
import { parseConfigRef } from '../config/saved-configs';
import { metadataValue, type ValueOf } from '../ratelimit/enforce';
import { estimateTokens } from '../ratelimit/estimate';
import { metadataPrefix } from '../ratelimit/policies';
import type { InferenceContext, TargetAttempt } from './context';
import type { InferenceRequest } from './inference-request';

export function requestValues(request: InferenceRequest): ValueOf {
  return (key) => {
    if (key.startsWith(metadataPrefix)) return metadataValue(request.metadata, key);
    if (key === 'api_key') return request.caller.keyId;
    if (key === 'workspace_id') return request.caller.workspaceId;
    if (key === 'prompt') return request.promptId;
    return undefined;
  };
}

export function targetValues(attempt: TargetAttempt): ValueOf {
  const { request } = attempt.inference;
  const ofRequest = requestValues(request);
  return (key) => {
    switch (key) {
      case 'provider':
        return attempt.target?.provider.name;
      case 'model':
        return modelOf(attempt);
      case 'config':
        return request.options.config.kind === 'saved' ? parseConfigRef(request.options.config.ref)?.id : undefined;
      case 'virtual_key':
        return catalogSlugOf(attempt);
      default:
        return ofRequest(key);
    }
  };
}

/**
 * What the request may spend in tokens: its body's estimated prompt, plus its completion cap (the
 * target's `override_params` win) or the default (ratelimit/estimate.ts).
 */
export function estimatedTokens(context: InferenceContext, overrides?: Record<string, unknown>): number {
  const estimate = tokenEstimate(context, overrides);
  return estimate.prompt + estimate.completion;
}

export function tokenEstimate(context: InferenceContext, overrides?: Record<string, unknown>) {
  const { request } = context;
  if (request.kind === 'passthrough') return estimateTokens({ bytes: request.bytes?.length ?? 0 });
  const body = context.inputBody ?? request.body;
  const bytes = context.inputBody || !request.clientBytes ? JSON.stringify(body).length : request.clientBytes.length;
  return estimateTokens({ bytes, body, embeddings: request.operation === 'embeddings', overrides });
}

/** The model this target is asked for: the target's `override_params` win over the body. */
export function modelOf(attempt: TargetAttempt): string | undefined {
  const overridden = attempt.leaf.settings.override_params?.model;
  if (typeof overridden === 'string') return overridden;
  const { inference } = attempt;
  if (inference.request.kind !== 'unified') return undefined;
  const model = (inference.inputBody ?? inference.request.body).model;
  return typeof model === 'string' ? model : undefined;
}

/** The catalog integration the target names (`@slug`, `virtual_key`, or the header), as target resolution reads it. */
function catalogSlugOf(attempt: TargetAttempt): string | undefined {
  const config = attempt.leaf.config;
  const headers = attempt.inference.request.options.credentials;
  const providerRef = config.provider ?? headers.provider;
  if (providerRef?.startsWith('@')) return providerRef.slice(1);
  return config.virtual_key ?? (config.provider ? undefined : headers.virtualKey);
}
