import { openAIOperation } from '../capabilities';
import { openAICompatibleAdapter } from '../openai-compatible/adapter';
import type { OpenAICompatibleProvider } from '../openai-compatible/providers';
import { providerError } from '../provider-error';
import { nativeResponsesCall } from '../responses-format/native';
import type { PreparedCall, ProviderAdapter, ProviderCall } from '../types';
import { azureAuthHeaders } from './auth';
import { azureOpenAIRoute, chooseDeployment } from './request';
import { promptFilterHook } from './stream';

/** Where an OpenAI-format call goes on Azure and what Azure needs besides the OpenAI request. */
export interface AzureRoute {
  url: URL;
  /** The body's `model`, when Azure routes by it and the target names the deployment. */
  model?: string;
  /** Auth and Azure's own headers. */
  headers: Record<string, string>;
}

/**
 * An OpenAI-format call prepared by an OpenAI-compatible adapter, then put on Azure's URL with
 * Azure's headers. The key is kept from the inner adapter, which would send it as a plain bearer.
 */
export async function prepareOnAzure(inner: ProviderAdapter, call: ProviderCall, route: AzureRoute): Promise<PreparedCall> {
  const body = route.model && route.model !== call.body.model ? { ...call.body, model: route.model } : call.body;
  const target = { ...call.target, settings: { ...call.target.settings, api_key: undefined } };
  const prepared = await inner.prepare({ ...call, target, body, clientBytes: body === call.body ? call.clientBytes : undefined });
  prepared.url = route.url;
  Object.assign(prepared.headers, route.headers);
  return prepared;
}

/**
 * Bodies, responses, streams and errors are OpenAI's, so the OpenAI-compatible adapter does the
 * work; this one adds the deployment URL, the api-version and Azure's auth. Streamed usage is asked
 * for with `stream_options` where the api-version knows it; older versions reject the option, so
 * it is left out (a client's own `stream_options` too) and such streams report no usage.
 */
const row = (streamUsage: OpenAICompatibleProvider['streamUsage']): ProviderAdapter =>
  openAICompatibleAdapter({ name: 'azure-openai', baseUrl: '', streamUsage, streamChunkHook: promptFilterHook });
const withStreamOptions = row('stream_options');
const withoutStreamOptions = row('always');

/** @see https://learn.microsoft.com/azure/ai-services/openai/reference */
export const azureOpenAIAdapter: ProviderAdapter = {
  async prepare(call: ProviderCall): Promise<PreparedCall> {
    const choice = chooseDeployment(call.target.settings, call.body.model);
    const { url, model, streamOptions } = azureOpenAIRoute(call.target.baseUrl, openAIOperation(call), choice);
    if (call.operation === 'responses') return responsesOnAzure(call, url, model);
    return prepareOnAzure(streamOptions ? withStreamOptions : withoutStreamOptions, call, { url, model, headers: azureAuthHeaders(call.target.settings) });
  },
  authenticate: (_request, target) => azureAuthHeaders(target.settings),
};

/**
 * A Responses request, run by Azure's Responses API as OpenAI runs it, with the deployment as the
 * body's `model`. The call keeps its target as it is: the credential is part of what a stored
 * response is valid for (responses-format/chain.ts).
 */
function responsesOnAzure(call: ProviderCall, url: URL, model: string | undefined): PreparedCall {
  const body = model && model !== call.body.model ? { ...call.body, model } : call.body;
  return nativeResponsesCall(
    { ...call, body, clientBytes: body === call.body ? call.clientBytes : undefined },
    {
      provider: 'azure-openai',
      url,
      authHeaders: azureAuthHeaders(call.target.settings),
      readError: (status, errorBody) => providerError('azure-openai', status, errorBody),
    },
  );
}
