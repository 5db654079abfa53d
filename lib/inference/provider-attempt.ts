import type { Readable } from 'node:stream';
import { GatewayError } from '../core/errors';
import { sseData, sseDone } from '../wire/sse';
import type { TokenUsage } from '../core/usage';
import { openOutbound } from '../outbound/http-client';
import { prepareCall } from '../providers/prepare-call';
import type { ProviderCall } from '../providers/types';
import { relayedResponseHeaders } from './relayed-headers';
import { isNetworkFailure, readProviderBody, type AttemptTimeout } from './provider-body';
import { streamIdleLimitMs, watchStreamIdle } from './stream-idle';
import type { AttemptOutcome } from '../routing/attempt-outcome';

const maxErrorBodyBytes = 1024 * 1024;
const maxResponseBodyBytes = 32 * 1024 * 1024;

export interface AttemptListeners {
  onUsage(usage: TokenUsage): void;
  /** A stream that had started failed or went silent; the client gets `error` as an SSE event. */
  onStreamError(error: GatewayError): void;
}

/**
 * One call to a provider through its adapter, under the attempt's timeout (it covers waiting for
 * the first byte, and every body the gateway reads whole: error bodies, non-streamed answers).
 * Streaming calls resolve once the first chunk of the body has arrived, so a provider that fails
 * before its first byte is a failure routing can retry or fall back from; after that, a broken
 * stream ends with an error event and `[DONE]`.
 */
export async function attemptProvider(call: ProviderCall, timeout: AttemptTimeout, options: AttemptListeners): Promise<AttemptOutcome> {
  const providerName = call.target.provider.name;

  let headers: Record<string, string> = { 'x-gateway-provider': providerName };
  try {
    const prepared = await prepareCall(call);
    if (timeout.expired) throw timeout.error();
    const outbound = openOutbound({ url: prepared.url, method: 'POST', headers: prepared.headers, body: prepared.body, target: providerName });
    timeout.watch(outbound);
    const response = await outbound.response;
    headers = relayedResponseHeaders(response.headers, providerName);

    if (response.status >= 300 && response.status < 400) {
      // Nothing in a redirect's body is used: giving it up ends the call, however slowly it comes.
      response.body.destroy();
      return { ok: false, status: 502, headers, error: redirectError(providerName, response.status, response.headers.location), network: false };
    }
    if (response.status >= 400) {
      const errorBody = await readProviderBody(response.body, timeout, { limit: maxErrorBodyBytes, what: 'The provider error response' });
      // The adapter reads the provider's own headers (e.g. Bedrock names its exception only there).
      const error = prepared.readError(response.status, errorBody, flattenHeaders(response.headers));
      return { ok: false, status: response.status, headers, error, network: false };
    }

    if (call.stream) {
      // Decided on the headers, before anything is committed: a body that is not the stream the
      // adapter reads (an HTML page, a JSON answer) would otherwise be relayed as if it were one.
      const notAStream = streamTypeError(providerName, response.headers['content-type'], prepared.streamContentType ?? 'text/event-stream');
      if (notAStream) {
        response.body.destroy();
        return { ok: false, status: notAStream.status, headers, error: notAStream, network: false };
      }
      await firstChunk(response.body, providerName);
      const transform = prepared.streamTransform(options.onUsage);
      const idleMs = streamIdleLimitMs(timeout.timeoutMs);
      let stalled = false;
      watchStreamIdle(response.body, idleMs, () => {
        stalled = true;
        outbound.abort();
      });
      response.body.on('error', (error) => {
        // The status is sent already: the failure becomes an error event, then [DONE], written to
        // the OpenAI side of the adapter's transform (whatever format its input side reads).
        const streamError = stalled
          ? new GatewayError(408, `${providerName} sent nothing for ${idleMs} ms in the middle of the stream; the gateway ended it.`, {
              code: 'timeout_error',
              provider: providerName,
            })
          : new GatewayError(502, `The ${providerName} stream broke off: ${error.message}.`, { code: 'provider_stream_error', provider: providerName });
        options.onStreamError(streamError);
        response.body.unpipe(transform);
        if (!transform.readableEnded) {
          transform.once('end', () => transform.destroy());
          transform.push(sseData(JSON.stringify(streamError.toBody())) + sseDone);
          transform.push(null);
        }
      });
      response.body.pipe(transform);
      // A client that goes away must not leave the provider call running.
      transform.on('close', () => {
        if (!response.body.readableEnded) outbound.abort();
      });
      return {
        ok: true,
        status: response.status,
        headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
        body: transform,
      };
    }

    const bytes = await readProviderBody(response.body, timeout, { limit: maxResponseBodyBytes, what: 'The provider response' });
    const result = prepared.readResponse(bytes);
    if (result.usage) options.onUsage(result.usage);
    return { ok: true, status: response.status, headers: { ...headers, 'content-type': 'application/json' }, body: result.body };
  } catch (caught) {
    const error = timeout.expired
      ? timeout.error()
      : caught instanceof GatewayError
        ? caught
        : new GatewayError(502, `${providerName} call failed: ${(caught as Error).message}`, { code: 'provider_error', provider: providerName });
    return { ok: false, status: error.status, headers, error, network: isNetworkFailure(error) };
  }
}

/**
 * The error for a streamed request whose 2xx answer is not of the media type the adapter's stream
 * reads (compared without parameters such as `charset`); undefined when it is.
 */
export function streamTypeError(provider: string, contentType: string | string[] | undefined, expected: string): GatewayError | undefined {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  const mediaType = value?.split(';')[0].trim().toLowerCase();
  if (mediaType === expected) return undefined;
  const answered = value?.trim() ? `with ${value.trim().slice(0, 200)}` : 'without a content type';
  return new GatewayError(502, `${provider} answered a stream request ${answered} instead of ${expected}.`, {
    code: 'provider_stream_content_type',
    provider,
  });
}

/** The gateway never follows a redirect (it could lead a stored key elsewhere); it says where it led. */
function redirectError(provider: string, status: number, location: string | string[] | undefined): GatewayError {
  const target = typeof location === 'string' && location ? ` to ${location.slice(0, 500)}` : '';
  return new GatewayError(
    502,
    `${provider} answered with a redirect (${status})${target}, which the gateway does not follow. Check the provider's base URL (custom_host) and the model name.`,
    {
      code: 'provider_redirect',
      provider,
    },
  );
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

/** Waits until the body has data, without consuming it. Fails when it ends or breaks first. */
function firstChunk(body: Readable, provider: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      body.off('readable', onReadable);
      body.off('error', onError);
      body.off('end', onEnd);
    };
    const onReadable = () => {
      if (body.readableLength > 0) {
        cleanup();
        resolve();
      }
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new GatewayError(502, `${provider} stream broke off before its first chunk: ${error.message}.`, { code: 'provider_stream_error', provider }));
    };
    const onEnd = () => {
      cleanup();
      reject(new GatewayError(502, `${provider} ended the stream without sending anything.`, { code: 'provider_stream_error', provider }));
    };
    body.on('readable', onReadable);
    body.once('error', onError);
    body.once('end', onEnd);
  });
}
