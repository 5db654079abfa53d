import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import { streamTypeError } from '../../lib/inference/provider-attempt';
import { AttemptTimeout, isNetworkFailure, providerConnectionError, readProviderBody } from '../../lib/inference/provider-body';
import { HttpParseError } from '../../lib/outbound/response-parser';
import { rejectedGatewayError } from '../support/gateway-error';

/** A provider body and the call it belongs to; aborting the call fails the body, as the outbound client does. */
function providerCall() {
  const body = new PassThrough();
  const state = { aborted: false };
  const call = {
    response: Promise.resolve({ status: 200, headers: {}, body }),
    abort: () => {
      state.aborted = true;
      body.destroy(Object.assign(new Error('The outbound call was aborted.'), { name: 'AbortError' }));
    },
  };
  return { body, call, state };
}

describe('reading a provider body the gateway holds', () => {
  it('returns the whole body', async () => {
    const { body, call } = providerCall();
    const timeout = new AttemptTimeout('openai', 1_000);
    timeout.watch(call);
    setTimeout(() => body.end('{"ok":true}'), 10);
    expect((await readProviderBody(body, timeout, { limit: 100, what: 'The body' })).toString()).toBe('{"ok":true}');
    timeout.stop();
  });

  it('ends with the request timeout and aborts the call when the body does not finish in time', async () => {
    const { body, call, state } = providerCall();
    const timeout = new AttemptTimeout('openai', 60);
    timeout.watch(call);
    body.write('{"err');
    const error = await rejectedGatewayError(readProviderBody(body, timeout, { limit: 100, what: 'The body' }));
    expect(error).toMatchObject({ status: 408, code: 'timeout_error', provider: 'openai' });
    expect(error.message).toBe('openai did not send its whole answer within the request timeout of 60 ms.');
    expect(state.aborted).toBe(true);
  });

  it('cuts a body off at the idle limit when the request timeout is longer (the 240 s cap)', async () => {
    const { body, call, state } = providerCall();
    const timeout = new AttemptTimeout('openai', 60_000);
    timeout.watch(call);
    const started = Date.now();
    const error = await rejectedGatewayError(readProviderBody(body, timeout, { limit: 100, what: 'The body', idleMs: 50 }));
    timeout.stop();
    expect(error).toMatchObject({ status: 408, code: 'timeout_error', provider: 'openai' });
    expect(error.message).toMatch(/sent nothing for 50 ms/);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(state.aborted).toBe(true);
  });

  it.each([
    [
      'a body cut before its length',
      new HttpParseError('HPE_INCOMPLETE', 'The connection closed before the whole response body arrived.'),
      /HPE_INCOMPLETE: The connection closed/,
    ],
    ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), /ECONNRESET: read ECONNRESET/],
    ['an aborted message', new Error('aborted'), /\(aborted\)/],
  ])('maps %s to a 502 provider_connection_broken', async (_name, cause, detail) => {
    const { body, call } = providerCall();
    const timeout = new AttemptTimeout('groq', 1_000);
    timeout.watch(call);
    body.write('{"error":');
    setTimeout(() => body.destroy(cause), 10);
    const error = await rejectedGatewayError(readProviderBody(body, timeout, { limit: 100, what: 'The body' }));
    timeout.stop();
    expect(error).toMatchObject({ status: 502, type: 'provider_error', code: 'provider_connection_broken', provider: 'groq' });
    expect(error.message).toMatch(/^The connection to groq broke before its answer was complete/);
    expect(error.message).toMatch(detail);
    expect(isNetworkFailure(error)).toBe(true);
  });

  it('maps a body that closes without an error, and keeps the gateway’s own errors', async () => {
    const { body, call } = providerCall();
    const timeout = new AttemptTimeout('groq', 1_000);
    timeout.watch(call);
    setTimeout(() => body.destroy(), 10);
    expect((await rejectedGatewayError(readProviderBody(body, timeout, { limit: 100, what: 'The body' }))).code).toBe('provider_connection_broken');
    timeout.stop();

    const tooLarge = new GatewayError(502, 'too large', { code: 'provider_response_too_large' });
    expect(providerConnectionError('groq', tooLarge)).toBe(tooLarge);
    expect(isNetworkFailure(tooLarge)).toBe(false);
  });
});

describe('the media type of a streamed answer', () => {
  it('accepts the expected type with any parameters and in any case', () => {
    expect(streamTypeError('openai', 'text/event-stream', 'text/event-stream')).toBeUndefined();
    expect(streamTypeError('openai', 'Text/Event-Stream; charset=utf-8', 'text/event-stream')).toBeUndefined();
    expect(streamTypeError('bedrock', 'application/vnd.amazon.eventstream', 'application/vnd.amazon.eventstream')).toBeUndefined();
  });

  it('refuses any other type, or none, with a 502 naming what came', () => {
    const html = streamTypeError('openai', 'text/html; charset=utf-8', 'text/event-stream')!;
    expect(html).toMatchObject({ status: 502, type: 'provider_error', code: 'provider_stream_content_type', provider: 'openai' });
    expect(html.message).toBe('openai answered a stream request with text/html; charset=utf-8 instead of text/event-stream.');
    expect(streamTypeError('openai', undefined, 'text/event-stream')!.message).toContain('answered a stream request without a content type');
    expect(streamTypeError('bedrock', 'text/event-stream', 'application/vnd.amazon.eventstream')!.code).toBe('provider_stream_content_type');
  });
});
