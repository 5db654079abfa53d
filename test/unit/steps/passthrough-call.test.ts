import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../../lib/config/types';
import type { TargetStep } from '../../../lib/inference/context';
import { inferenceRequest, type InferenceCaller, type PassthroughRequest } from '../../../lib/inference/inference-request';
import { runSteps } from '../../../lib/inference/steps';
import { passthroughCallStep } from '../../../lib/inference/steps/passthrough-call';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { resolveTargetStep } from '../../../lib/inference/steps/resolve-target';
import { timeoutStep } from '../../../lib/inference/steps/timeout';
import type { AttemptOutcome } from '../../../lib/routing/attempt-outcome';
import { ownPath } from '../../support/fake-upstream';
import { closedPort, useLoopbackUpstream } from '../../support/loopback-upstream';
import { attemptAt, chatRequest, okResult, stepContext } from '../../support/step-context';

const loopback = useLoopbackUpstream();

/** A caller of its own, so the log record's workspace can only have come from the request. */
const caller: InferenceCaller = { organisationId: 'org_passthrough', workspaceId: 'ws_passthrough', keyId: 'key_passthrough' };

/** The target steps up to and including the call, in the order `targetSteps.passthrough` runs them. */
const callSteps: readonly TargetStep[] = [resolveTargetStep, timeoutStep, passthroughCallStep];

type PassthroughInput = Pick<PassthroughRequest, 'method' | 'providerPath' | 'rawQuery'> & { bytes?: Buffer; headers?: Record<string, string> };

/**
 * A pass-through request to the provider at `customHost`, named as a client names it without a
 * config (provider, key and host as credentials), or through an inline `config` when given.
 */
function passthroughRequest(input: PassthroughInput, customHost: string, config?: GatewayConfig): PassthroughRequest {
  return inferenceRequest({
    kind: 'passthrough',
    ...input,
    caller,
    options: {
      credentials: { provider: 'openai', apiKey: 'sk-passthrough', customHost },
      ...(config ? { config: { kind: 'inline', config } } : {}),
    },
  });
}

/** Runs the `config` step, then one attempt at the plan's first leaf through the call. */
async function forward(request: PassthroughRequest, config: GatewayConfig = {}) {
  const harness = stepContext(request);
  await resolveConfig.run(harness.context, async () => okResult());
  const outcome = await runSteps(callSteps, attemptAt(harness.context, config));
  return { ...harness, outcome };
}

async function readAll(body: unknown): Promise<Buffer> {
  if (!(body instanceof Readable)) throw new Error('expected a readable body');
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function answered(outcome: AttemptOutcome): Extract<AttemptOutcome, { ok: true }> {
  if (!outcome.ok) throw new Error(`expected an answer, got ${outcome.status}: ${outcome.error.message}`);
  return outcome;
}

/** Bytes that are not UTF-8 text, so any decoding and re-encoding on the way would show. */
const binaryBytes = Buffer.from([0x00, 0xff, 0xfe, 0x7b, 0x22, 0x0d, 0x0a, 0xc3, 0x28, 0x80, 0x41]);

describe('passthroughCallStep: the request reaches the provider as it came', () => {
  it('sends the method, path, query and bytes unchanged, with the target key in place of the client headers that must not go', async () => {
    const host = ownPath(loopback.upstream, 'pt', 'echo');
    const { outcome } = await forward(
      passthroughRequest(
        {
          method: 'POST',
          providerPath: 'echo/x',
          rawQuery: 'a=1&b=two%20words&a=3',
          bytes: binaryBytes,
          headers: { 'openai-beta': 'assistants=v2', authorization: 'Bearer client-own', 'x-gateway-config': 'cfg_ignored', connection: 'close' },
        },
        host.custom_host,
      ),
    );
    const answer = answered(outcome);
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json', 'x-gateway-provider': 'openai' });
    // Framing is the gateway transport's to set, so the provider's is not relayed.
    expect(answer.headers['content-length']).toBeUndefined();

    const echoed = JSON.parse((await readAll(answer.body)).toString('utf8'));
    expect(echoed).toMatchObject({
      method: 'POST',
      path: `${host.prefix}/v1/echo/x`,
      url: `${host.prefix}/v1/echo/x?a=1&b=two%20words&a=3`,
      query: { a: ['1', '3'], b: 'two words' },
      bodyLength: binaryBytes.length,
    });
    expect(Buffer.from(echoed.bodyBase64, 'base64').equals(binaryBytes)).toBe(true);
    expect(echoed.headers).toMatchObject({
      'openai-beta': 'assistants=v2',
      authorization: 'Bearer sk-passthrough',
      'content-length': String(binaryBytes.length),
    });
    expect(Object.keys(echoed.headers).filter((name) => name.startsWith('x-gateway-'))).toEqual([]);
    // What the fake recorded agrees with what it echoed: one call, the bytes as sent.
    const received = loopback.upstream.requests.filter((request) => request.path.startsWith(host.prefix));
    expect(received).toHaveLength(1);
    expect(received[0].body.equals(binaryBytes)).toBe(true);
  });

  it('sends a GET without a body, and a DELETE with its own method', async () => {
    const host = ownPath(loopback.upstream, 'pt', 'methods');
    for (const method of ['GET', 'DELETE']) {
      const { outcome } = await forward(passthroughRequest({ method, providerPath: 'files/file-1/echo', rawQuery: '' }, host.custom_host));
      const echoed = JSON.parse((await readAll(answered(outcome).body)).toString('utf8'));
      expect(echoed).toMatchObject({ method, url: `${host.prefix}/v1/files/file-1/echo`, bodyLength: 0 });
    }
    expect(loopback.upstream.requests.filter((request) => request.path.startsWith(host.prefix)).map((request) => request.method)).toEqual(['GET', 'DELETE']);
  });

  it("writes the caller's workspace and the request's method and path to the log record", async () => {
    const host = ownPath(loopback.upstream, 'pt', 'logged');
    const { outcome, context, records } = await forward(
      passthroughRequest({ method: 'POST', providerPath: 'echo/x', rawQuery: 'a=1', bytes: Buffer.from('{"log":true}') }, host.custom_host),
    );
    await readAll(answered(outcome).body);
    expect(records).toEqual([]);
    await context.finish({ status: 200 });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      workspace_id: 'ws_passthrough',
      organisation_id: 'org_passthrough',
      api_key_id: 'key_passthrough',
      provider: 'openai',
      method: 'POST',
      path: '/v1/echo/x',
      status: 200,
    });
    // A pass-through body is not read as a chat request: no model, no usage.
    expect(records[0].model).toBeUndefined();
    expect(records[0].usage).toBeUndefined();
  });
});

describe("passthroughCallStep: the provider's error comes back as it was", () => {
  const errorBody = '{"error":{"message":"Slow down, pass-through.","type":"requests","code":"rate_limit_exceeded"}}';
  const scriptedError = { status: 429, body: errorBody, headers: { 'content-type': 'application/json', 'retry-after': '7' } };

  it('without a config, relays the status, headers and body as an answer: nothing would retry it', async () => {
    const host = ownPath(loopback.upstream, 'pt', 'error-relayed');
    loopback.upstream.script(host.prefix, [scriptedError]);
    const { outcome } = await forward(
      passthroughRequest({ method: 'POST', providerPath: 'echo/x', rawQuery: 'a=1', bytes: Buffer.from('{}') }, host.custom_host),
    );
    const answer = answered(outcome);
    expect(answer.status).toBe(429);
    expect(answer.headers).toMatchObject({ 'content-type': 'application/json', 'retry-after': '7', 'x-gateway-provider': 'openai' });
    expect((await readAll(answer.body)).toString('utf8')).toBe(errorBody);
  });

  it('with a config, holds the error whole as raw, so routing can retry or fall back', async () => {
    const host = ownPath(loopback.upstream, 'pt', 'error-held');
    loopback.upstream.script(host.prefix, [scriptedError]);
    const config: GatewayConfig = { provider: 'openai', api_key: 'sk-configured', custom_host: host.custom_host };
    const { outcome, context, records } = await forward(
      passthroughRequest({ method: 'POST', providerPath: 'echo/x', rawQuery: 'a=1', bytes: Buffer.from('{}') }, host.custom_host, config),
      config,
    );
    expect(outcome).toMatchObject({ ok: false, status: 429, network: false });
    if (outcome.ok) return;
    expect(outcome.raw?.toString('utf8')).toBe(errorBody);
    expect(outcome.headers).toMatchObject({ 'content-type': 'application/json', 'retry-after': '7', 'x-gateway-provider': 'openai' });
    expect(outcome.error).toMatchObject({ status: 429, code: 'provider_error', provider: 'openai', message: 'openai answered 429.' });
    // The config's key, not the credentials', went to the provider.
    expect(loopback.upstream.requests.filter((request) => request.path.startsWith(host.prefix)).map((request) => request.headers.authorization)).toEqual([
      'Bearer sk-configured',
    ]);
    await context.finish({ status: 429 });
    expect(records[0]).toMatchObject({ workspace_id: 'ws_passthrough', status: 429, provider: 'openai' });
  });

  it('answers a refused connection as a network failure', async () => {
    const port = await closedPort();
    const { outcome } = await forward(passthroughRequest({ method: 'GET', providerPath: 'models', rawQuery: '' }, `http://127.0.0.1:${port}/v1`));
    expect(outcome).toMatchObject({ ok: false, status: 502, network: true, headers: { 'x-gateway-provider': 'openai' } });
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({ code: 'provider_unreachable', provider: 'openai' });
    expect(outcome.error.message).toContain('ECONNREFUSED');
  });
});

describe('passthroughCallStep: its place in the steps', () => {
  it('refuses a unified request', async () => {
    const config: GatewayConfig = { provider: 'openai', api_key: 'sk-unified' };
    const { context } = stepContext(chatRequest(config));
    // Wrapped in an async function: the step throws this synchronously rather than rejecting.
    await expect(async () => runSteps([passthroughCallStep], attemptAt(context, config))).rejects.toThrow(
      'The pass-through call step serves pass-through requests.',
    );
  });
});
