import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../../lib/config/types';
import type { TargetStep } from '../../../lib/inference/context';
import { inferenceRequest } from '../../../lib/inference/inference-request';
import { runSteps } from '../../../lib/inference/steps';
import { providerCallStep } from '../../../lib/inference/steps/provider-call';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { resolveTargetStep } from '../../../lib/inference/steps/resolve-target';
import { timeoutStep } from '../../../lib/inference/steps/timeout';
import type { JsonObject } from '../../../lib/providers/types';
import type { AttemptOutcome } from '../../../lib/routing/attempt-outcome';
import { ownPath } from '../../support/fake-upstream';
import { closedPort, useLoopbackUpstream } from '../../support/loopback-upstream';
import { attemptAt, chatRequest, okResult, stepContext, testCaller } from '../../support/step-context';

const loopback = useLoopbackUpstream();

/** The target steps up to and including the call, in the order `targetSteps.unified` runs them. */
const callSteps: readonly TargetStep[] = [resolveTargetStep, timeoutStep, providerCallStep];

/** Runs the `config` step, then one attempt at the config's first target through the call. */
async function callProvider(config: GatewayConfig, body?: JsonObject) {
  const harness = stepContext(chatRequest(config, { body }));
  await resolveConfig.run(harness.context, async () => okResult());
  const outcome = await runSteps(callSteps, attemptAt(harness.context, config));
  return { ...harness, outcome };
}

const userSays = (text: string, extra: JsonObject = {}): JsonObject => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...extra });

/** A whole body as text (a Buffer or a string, as the adapter answers it). */
function bodyText(outcome: AttemptOutcome): string {
  if (!outcome.ok) throw new Error(`expected an answer, got ${outcome.status}: ${outcome.error.message}`);
  if (outcome.body instanceof Readable) throw new Error('expected a whole body, got a stream');
  return String(outcome.body);
}

async function readAll(body: Readable): Promise<string> {
  let text = '';
  for await (const chunk of body) text += chunk;
  return text;
}

describe('providerCallStep: a whole answer', () => {
  it("answers the provider's chat completion in OpenAI's shape, with status 200", async () => {
    const host = ownPath(loopback.upstream, 'call', 'whole');
    const { outcome } = await callProvider({ provider: 'openai', api_key: 'sk-whole', custom_host: host.custom_host }, userSays('hello there'));
    expect(outcome).toMatchObject({ ok: true, status: 200, headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai' } });
    const answer = JSON.parse(bodyText(outcome));
    expect(answer).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: hello there' }, finish_reason: 'stop' }],
    });
    expect(answer.id).toMatch(/^chatcmpl-fake/);
  });

  it('sends the body with override_params over it, and the key as a bearer token', async () => {
    const host = ownPath(loopback.upstream, 'call', 'override');
    const body = userSays('override me', { temperature: 0.2 });
    const { outcome } = await callProvider(
      { provider: 'openai', api_key: 'sk-override', custom_host: host.custom_host, override_params: { model: 'gpt-4o', temperature: 0 } },
      body,
    );
    expect(outcome.ok).toBe(true);
    // The answer names the model the provider was asked for: the override's, not the client's.
    expect(JSON.parse(bodyText(outcome)).model).toBe('gpt-4o');

    const received = loopback.upstream.requests.filter((request) => request.path.startsWith(host.prefix));
    expect(received.map((request) => [request.method, request.path])).toEqual([['POST', `${host.prefix}/v1/chat/completions`]]);
    expect(received[0].json).toEqual({ ...body, model: 'gpt-4o', temperature: 0 });
    expect(received[0].headers.authorization).toBe('Bearer sk-override');
    expect(received[0].headers['content-type']).toBe('application/json');
  });

  it("puts the answer's usage on the context, and in the log record once the request finishes", async () => {
    const host = ownPath(loopback.upstream, 'call', 'usage');
    const { outcome, context, records } = await callProvider(
      { provider: 'openai', api_key: 'sk-usage', custom_host: host.custom_host, override_params: { model: 'gpt-4o' } },
      userSays('count my tokens'),
    );
    const answered = JSON.parse(bodyText(outcome)).usage;
    // The fake counts 3 + (4 + ceil(15 / 4)) prompt tokens and ceil(21 / 4) for "echo: count my tokens".
    expect(answered).toMatchObject({ prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 });
    expect(context.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 });
    // Nothing is written before the caller says the answer is done.
    expect(records).toEqual([]);

    await context.finish({ status: 200 });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o',
      workspace_id: testCaller.workspaceId,
      organisation_id: testCaller.organisationId,
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      stream: false,
      usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 },
    });
    expect(records[0].error).toBeUndefined();
  });
});

describe('providerCallStep: a streamed answer', () => {
  it('answers a readable SSE body that ends with [DONE], and records the usage it asked for', async () => {
    const host = ownPath(loopback.upstream, 'call', 'stream');
    const { outcome, context, records } = await callProvider(
      { provider: 'openai', api_key: 'sk-stream', custom_host: host.custom_host },
      userSays('stream me', { stream: true }),
    );
    expect(outcome).toMatchObject({ ok: true, status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8', 'x-gateway-provider': 'openai' } });
    const body = (outcome as { body: unknown }).body;
    expect(body).toBeInstanceOf(Readable);

    const text = await readAll(body as Readable);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const events = text
      .split('\n\n')
      .filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]')
      .map((event) => JSON.parse(event.slice('data: '.length)));
    expect(events.length).toBeGreaterThan(2);
    expect(events.every((event) => event.object === 'chat.completion.chunk')).toBe(true);
    expect(events.map((event) => event.choices[0]?.delta?.content ?? '').join('')).toBe('echo: stream me');
    // The gateway asked for usage the client did not: the provider's usage chunk is not relayed.
    expect(events.some((event) => event.usage)).toBe(false);

    const sent = loopback.upstream.requests.filter((request) => request.path.startsWith(host.prefix));
    expect(sent).toHaveLength(1);
    expect(sent[0].json).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(sent[0].headers.accept).toBe('text/event-stream');

    // 3 + (4 + ceil(9 / 4)) prompt tokens, ceil(15 / 4) for "echo: stream me".
    expect(context.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 });
    await context.finish({ status: 200 });
    expect(records[0]).toMatchObject({ stream: true, status: 200, usage: { total_tokens: 14 } });
  });
});

describe('providerCallStep: failures are outcomes', () => {
  it("answers a provider's 429 with its status and message, not a rejection", async () => {
    const host = ownPath(loopback.upstream, 'call', 'error-model');
    const { outcome } = await callProvider(
      { provider: 'openai', api_key: 'sk-429', custom_host: host.custom_host },
      userSays('too many', { model: 'error-429' }),
    );
    expect(outcome).toMatchObject({ ok: false, status: 429, network: false });
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({
      status: 429,
      message: 'Rate limit reached for requests (fake upstream). Please try again in 1s.',
      code: 'rate_limit_exceeded',
      provider: 'openai',
    });
    // Retry hints and rate-limit state go back to the client (and to routing's retry-after).
    expect(outcome.headers).toMatchObject({ 'retry-after': '1', 'x-ratelimit-remaining-requests': '0', 'x-gateway-provider': 'openai' });
  });

  it('answers a scripted 429 on a streamed request before anything is streamed', async () => {
    const host = ownPath(loopback.upstream, 'call', 'scripted');
    loopback.upstream.script(host.prefix, [{ status: 429, json: { error: { message: 'Slow down, scripted.', type: 'requests', code: 'scripted_limit' } } }]);
    const { outcome, context, records } = await callProvider(
      { provider: 'openai', api_key: 'sk-scripted', custom_host: host.custom_host },
      userSays('stream or not', { stream: true }),
    );
    expect(outcome).toMatchObject({ ok: false, status: 429, network: false });
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({ status: 429, message: 'Slow down, scripted.', code: 'scripted_limit', type: 'requests' });
    expect(context.usage).toBeUndefined();
    await context.finish({ status: 429 });
    expect(records[0]).toMatchObject({ status: 429, provider: 'openai' });
    expect(records[0].usage).toBeUndefined();
  });

  it('answers a refused connection as a network failure', async () => {
    const port = await closedPort();
    const { outcome } = await callProvider({ provider: 'openai', api_key: 'sk-closed', custom_host: `http://127.0.0.1:${port}/v1` }, userSays('anyone there?'));
    expect(outcome).toMatchObject({ ok: false, status: 502, network: true, headers: { 'x-gateway-provider': 'openai' } });
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({ code: 'provider_unreachable', provider: 'openai' });
    expect(outcome.error.message).toContain(`127.0.0.1:${port}`);
    expect(outcome.error.message).toContain('ECONNREFUSED');
  });

  it("answers a provider that says nothing within the target's request_timeout as a 408 network failure", async () => {
    const host = ownPath(loopback.upstream, 'call', 'hang');
    loopback.upstream.script(host.prefix, [{ hangMs: 5_000 }]);
    const started = performance.now();
    const { outcome } = await callProvider({ provider: 'openai', api_key: 'sk-hang', custom_host: host.custom_host, request_timeout: 200 }, userSays('wait'));
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(outcome).toMatchObject({ ok: false, status: 408, network: true });
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({ code: 'timeout_error', message: 'openai did not answer within the request timeout of 200 ms.' });
  });
});

describe('providerCallStep: its place in the steps', () => {
  it('names the step that must run before it', async () => {
    const config: GatewayConfig = { provider: 'openai', api_key: 'sk-order', custom_host: ownPath(loopback.upstream, 'call', 'order').custom_host };
    const { context } = stepContext(chatRequest(config));
    await resolveConfig.run(context, async () => okResult());
    // Wrapped in an async function: the step throws these synchronously rather than rejecting.
    await expect(async () => runSteps([providerCallStep], attemptAt(context, config))).rejects.toThrow('The "target" step must run before this one.');
    await expect(async () => runSteps([resolveTargetStep, providerCallStep], attemptAt(context, config))).rejects.toThrow(
      'The "timeout" step must run before this one.',
    );
  });

  it('refuses a pass-through request', async () => {
    const request = inferenceRequest({ kind: 'passthrough', method: 'GET', providerPath: 'models', rawQuery: '', caller: testCaller });
    const { context } = stepContext(request);
    const config: GatewayConfig = {};
    await expect(async () => runSteps([providerCallStep], attemptAt(context, config))).rejects.toThrow('The provider call step serves the unified routes.');
  });
});
