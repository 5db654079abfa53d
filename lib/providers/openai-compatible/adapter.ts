import { GatewayError } from '../../core/errors';
import { assertOperationSupported, openAIOperation } from '../capabilities';
import type { JsonObject, PreparedCall, ProviderAdapter, ProviderCall, ResolvedTarget } from '../types';
import { providerError } from '../provider-error';
import type { OpenAICompatibleProvider } from './providers';
import { failedFinish, finishFailure, mapFinishReasons, openAIStreamTransform } from './stream';
import { readUsage } from './usage';

const operationPaths = { chat: '/chat/completions', completions: '/completions', embeddings: '/embeddings' } as const;

/** The adapter every OpenAI-compatible provider shares; the row supplies its differences. */
export function openAICompatibleAdapter(row: OpenAICompatibleProvider): ProviderAdapter {
  return {
    prepare(call: ProviderCall): PreparedCall | Promise<PreparedCall> {
      const operation = openAIOperation(call);
      if (operation === 'responses') {
        // Only a provider that declares the Responses API gets it as it is (see `responsesApi`).
        assertOperationSupported(call);
        const options = {
          provider: row.name,
          url: new URL(`${call.target.baseUrl}/responses`),
          authHeaders: authHeaders(row, call.target),
          readError: (status: number, body: Buffer) => providerError(row.name, status, body),
        };
        // Loaded on the first Responses call: the chat functions never make one.
        return import('../responses-format/native').then((native) => native.nativeResponsesCall(call, options));
      }
      const upstream = upstreamBody(row, call);
      const headers: Record<string, string> = {
        ...call.forwardHeaders,
        'content-type': 'application/json',
        accept: call.stream ? 'text/event-stream' : 'application/json',
        ...authHeaders(row, call.target),
      };
      return {
        url: new URL(call.target.baseUrl + operationPaths[operation]),
        headers,
        body: upstream.body === call.body && call.clientBytes ? call.clientBytes : JSON.stringify(upstream.body),
        readError: (status, body) => providerError(row.name, status, body),
        readResponse(bytes) {
          let parsed: any;
          try {
            parsed = JSON.parse(bytes.toString('utf8'));
          } catch {
            throw new GatewayError(502, `${row.name} answered with a body that is not JSON.`, { code: 'provider_response_unreadable', provider: row.name });
          }
          const failure = row.errorFinishReasons && failedFinish(parsed, row.errorFinishReasons);
          if (failure) throw finishFailure(row.name, failure);
          const usage = readUsage(parsed);
          const body = row.finishReasons && mapFinishReasons(parsed, row.finishReasons) ? JSON.stringify(parsed) : bytes;
          return { body, usage };
        },
        streamTransform: (onUsage) =>
          openAIStreamTransform({
            provider: row.name,
            dropUsageChunk: upstream.addedUsageRequest,
            finishReasons: row.finishReasons,
            errorFinish: row.errorFinishReasons && { provider: row.name, reasons: row.errorFinishReasons },
            chunkHook: row.streamChunkHook?.(),
            onUsage,
          }),
      };
    },
    authenticate: (_request, target) => authHeaders(row, target),
  };
}

/** The provider key in the row's header form, plus OpenAI's organization and project scoping. */
function authHeaders(row: OpenAICompatibleProvider, target: ResolvedTarget): Record<string, string> {
  const { api_key: key, compat_organization: organization, compat_project: project } = target.settings;
  const headers: Record<string, string> = {};
  if (key) headers[row.auth?.header ?? 'authorization'] = (row.auth?.prefix ?? 'Bearer ') + key;
  if (organization) headers['openai-organization'] = organization;
  if (project) headers['openai-project'] = project;
  return headers;
}

interface UpstreamBody {
  body: JsonObject;
  /** True when the gateway asked for streamed usage that the client did not ask for. */
  addedUsageRequest: boolean;
}

/** The request body for the provider; the same object as the call's body when nothing changed. */
function upstreamBody(row: OpenAICompatibleProvider, call: ProviderCall): UpstreamBody {
  let body = call.body;
  let addedUsageRequest = false;
  if (call.stream) {
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    if (row.streamUsage === 'stream_options' && streamOptions?.include_usage !== true) {
      // Usage is logged for every request, so it is asked for even when the client did not.
      body = { ...body, stream_options: { ...streamOptions, include_usage: true } };
      addedUsageRequest = true;
    } else if (row.streamUsage === 'always' && streamOptions !== undefined) {
      const { stream_options: _dropped, ...rest } = body;
      body = rest;
    }
  }
  if (row.mapRequest) body = row.mapRequest(body);
  return { body, addedUsageRequest };
}
