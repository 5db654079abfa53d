import { openAIOperation } from '../capabilities';
// The modules themselves, not the provider's index: that holds the definition, which loads this adapter.
import { prepareOnAzure } from '../azure-openai/adapter';
import { azureAuthHeaders, bearerAuthHeaders } from '../azure-openai/auth';
import { promptFilterHook } from '../azure-openai/stream';
import { openAICompatibleAdapter } from '../openai-compatible/adapter';
import type { PreparedCall, ProviderAdapter, ProviderCall, ProviderSettings, RawRequest } from '../types';
import { azureAIUrl, endpointKind } from './request';

/**
 * The Azure AI model inference API is OpenAI's chat, embeddings and completions format, so the
 * OpenAI-compatible adapter does the work. Its streams report usage in the last chunk unasked, and
 * `stream_options` is not part of the API, so it is not sent (streamUsage `always`). Azure's content
 * filtering applies here too, with the same leading prompt-filter chunk as Azure OpenAI.
 * @see https://learn.microsoft.com/azure/ai-foundry/model-inference/reference/reference-model-inference-chat-completions
 */
const inner = openAICompatibleAdapter({ name: 'azure-ai', baseUrl: '', streamUsage: 'always', streamChunkHook: promptFilterHook });

/**
 * Auth and routing headers. Foundry resources take a key in `api-key` (or an Entra ID token as a
 * bearer); serverless and managed endpoints take their key or token as `Authorization: Bearer`.
 * `extra-parameters: pass-through` hands parameters outside the model inference API (a model's
 * own, e.g. Mistral's `safe_prompt`) to the model, as the gateway does for every OpenAI-format
 * provider, instead of Azure's default of rejecting them; a client's own `extra-parameters` header
 * (`drop`, `error`) wins. A managed endpoint's `cloudC_deployment_name` pins the deployment
 * (`azureml-model-deployment`) instead of the endpoint's traffic split.
 */
function azureAIHeaders(settings: ProviderSettings, requestHeaders: Record<string, string>): Record<string, string> {
  const kind = endpointKind(settings);
  const headers = kind === 'foundry' ? azureAuthHeaders(settings) : bearerAuthHeaders(settings);
  headers['extra-parameters'] = requestHeaders['extra-parameters'] || 'pass-through';
  if (kind === 'managed' && settings.cloudC_deployment_name) headers['azureml-model-deployment'] = settings.cloudC_deployment_name;
  return headers;
}

export const azureAIAdapter: ProviderAdapter = {
  async prepare(call: ProviderCall): Promise<PreparedCall> {
    const { settings } = call.target;
    return prepareOnAzure(inner, call, {
      url: azureAIUrl(call.target.baseUrl, openAIOperation(call), settings),
      // A Foundry resource routes by `model`: the deployment name, when the target names one.
      model: endpointKind(settings) === 'foundry' ? settings.cloudC_deployment_name : undefined,
      headers: azureAIHeaders(settings, call.requestHeaders),
    });
  },
  authenticate: (request: RawRequest, target) => azureAIHeaders(target.settings, request.headers),
};
