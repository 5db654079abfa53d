import type { RouteContext, RouteHandler } from '../http/pipeline';
import { readJsonObject } from '../http/json-body';
import { GatewayError } from '../http/errors';
import { readBody } from '../http/read-body';
import { sseData, sseDone } from '../http/sse';
import type { GatewayResponse } from '../http/types';
import { sendOutbound } from '../outbound/http-client';
import { providerError } from '../providers/openai-compatible/errors';
import { mapFinishReasons, openAIStreamTransform } from '../providers/openai-compatible/stream';
import { readUsage } from '../providers/openai-compatible/usage';
import { operationPaths, type JsonObject, type Operation } from '../providers/types';
import { relayedResponseHeaders } from './relayed-headers';
import { authHeaders, resolveTarget, type Target } from './target';
import { validateInferenceBody } from './validate';

const maxErrorBodyBytes = 1024 * 1024;
const maxResponseBodyBytes = 32 * 1024 * 1024;

/**
 * A unified inference route (`/v1/chat/completions`, `/v1/completions`, `/v1/embeddings`): the
 * OpenAI-format request goes to the selected provider and its answer comes back in OpenAI's format,
 * streamed event by event when the client asked for a stream.
 */
export function unifiedRoute(operation: Operation): RouteHandler {
  return async function unifiedInference(context: RouteContext): Promise<GatewayResponse> {
    const body = readJsonObject(context.request);
    validateInferenceBody(operation, body);
    const target = resolveTarget(context.request.headers);
    const stream = body.stream === true;
    context.log.provider = target.provider.name;
    context.log.model = body.model as string;
    context.log.stream = stream;

    const upstream = prepareUpstreamBody(target, body, stream);
    const abort = new AbortController();
    const response = await sendOutbound({
      url: new URL(target.baseUrl + operationPaths[operation]),
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...authHeaders(target) },
      body: upstream.changed ? JSON.stringify(upstream.body) : context.request.body,
      signal: abort.signal,
      target: target.provider.name,
    });
    const headers = relayedResponseHeaders(response.headers, target.provider.name);

    if (response.status >= 400) {
      const errorBody = await readBody(response.body, maxErrorBodyBytes, 'The provider error response');
      throw providerError(target.provider.name, response.status, errorBody, headers);
    }

    const isEventStream = String(response.headers['content-type'] ?? '').includes('text/event-stream');
    if (stream && isEventStream) {
      const transform = openAIStreamTransform({
        dropUsageChunk: upstream.addedUsageRequest,
        finishReasons: target.provider.finishReasons,
        onUsage: (usage) => (context.log.usage = usage),
      });
      response.body.on('error', (error) => {
        // The status is sent already: the failure becomes an error event, then [DONE].
        context.log.error = { message: `${target.provider.name} stream failed: ${error.message}`, code: 'provider_stream_error' };
        if (!transform.writableEnded) transform.end(streamErrorEvents(target.provider.name, error));
      });
      response.body.pipe(transform);
      // A client that goes away must not leave the provider call running.
      transform.on('close', () => {
        if (!response.body.readableEnded) abort.abort();
      });
      return { status: response.status, headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }, body: transform };
    }

    const bytes = await readBody(response.body, maxResponseBodyBytes, 'The provider response');
    let parsed: any;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new GatewayError(502, `${target.provider.name} answered with a body that is not JSON.`, { code: 'provider_response_unreadable', provider: target.provider.name });
    }
    const usage = readUsage(parsed);
    if (usage) context.log.usage = usage;
    const finishReasons = target.provider.finishReasons;
    const out = finishReasons && mapFinishReasons(parsed, finishReasons) ? JSON.stringify(parsed) : bytes;
    return { status: response.status, headers: { ...headers, 'content-type': 'application/json' }, body: out };
  };
}

/** Bytes that close any partial event and append an OpenAI-style error event and `[DONE]`. */
function streamErrorEvents(provider: string, error: Error): string {
  const body = new GatewayError(502, `The ${provider} stream broke off: ${error.message}.`, { code: 'provider_stream_error', provider }).toBody();
  return `\n\n${sseData(JSON.stringify(body))}${sseDone}`;
}

interface UpstreamBody {
  body: JsonObject;
  /** False when the client's bytes can be sent as they came. */
  changed: boolean;
  /** True when the gateway asked for streamed usage that the client did not ask for. */
  addedUsageRequest: boolean;
}

function prepareUpstreamBody(target: Target, body: JsonObject, stream: boolean): UpstreamBody {
  let upstream = body;
  let changed = false;
  let addedUsageRequest = false;
  if (stream) {
    const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
    if (target.provider.streamUsage === 'stream_options' && streamOptions?.include_usage !== true) {
      // Usage is logged for every request, so it is asked for even when the client did not.
      upstream = { ...upstream, stream_options: { ...streamOptions, include_usage: true } };
      changed = true;
      addedUsageRequest = true;
    } else if (target.provider.streamUsage === 'always' && streamOptions !== undefined) {
      const { stream_options: _dropped, ...rest } = upstream;
      upstream = rest;
      changed = true;
    }
  }
  if (target.provider.mapRequest) {
    const mapped = target.provider.mapRequest(upstream);
    if (mapped !== upstream) {
      upstream = mapped;
      changed = true;
    }
  }
  return { body: upstream, changed, addedUsageRequest };
}
