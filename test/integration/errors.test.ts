import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxJsonDepth } from '../../lib/wire/client-json';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { closedPort } from '../support/loopback-upstream';
import { env, gatewayFetch, type TestResponse } from '../support/gateway-client';

const json = { 'content-type': 'application/json', 'x-gateway-provider': 'openai', authorization: 'Bearer sk-test' };
const chat = (body: unknown, headers: Record<string, string> = {}) =>
  gatewayFetch('/chat/completions', { method: 'POST', headers: { ...json, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

async function expectError(response: TestResponse | Response, status: number, match: { param?: string | null; code?: string; message?: RegExp } = {}) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as any;
  expect(Object.keys(body.error).sort()).toEqual(expect.arrayContaining(['code', 'message', 'param', 'type']));
  if (match.param !== undefined) expect(body.error.param).toBe(match.param);
  if (match.code) expect(body.error.code).toBe(match.code);
  if (match.message) expect(body.error.message).toMatch(match.message);
  return body;
}

describe('errors', () => {
  it('answers 404 with the error body outside /v1', async () => {
    const response = await fetch(`${env().gatewayUrl.replace(/\/v1$/, '')}/health`);
    await expectError(response, 404, { code: 'route_not_found' });
    const root = await fetch(`${env().gatewayUrl}`);
    expect(root.status).toBe(404);
  });

  it('answers 400 for malformed JSON, missing model and missing messages', async () => {
    await expectError(await chat('{"model": '), 400, { code: 'invalid_json' });
    await expectError(await chat({ messages: [{ role: 'user', content: 'hi' }] }), 400, { param: 'model' });
    await expectError(await chat({ model: 'gpt-4o' }), 400, { param: 'messages' });
    await expectError(await chat({ model: 'gpt-4o', messages: [] }), 400, { param: 'messages' });
    await expectError(await chat('[1,2]'), 400);
  });

  it('answers 415 for a body that is not JSON', async () => {
    await expectError(await chat('model=gpt-4o', { 'content-type': 'application/x-www-form-urlencoded' }), 415, { message: /application\/json/ });
  });

  it('answers 413 above 4 MB', async () => {
    const big = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(4 * 1024 * 1024) }] });
    await expectError(await chat(big), 413, { message: /4 MB/ });
  });

  it('answers 400 for invalid x-gateway-metadata', async () => {
    await expectError(await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-metadata': '{not json' }), 400, {
      param: 'x-gateway-metadata',
    });
    await expectError(await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-metadata': '[1]' }), 400);
  });

  it('answers 400 saying how to select a provider when none is selected', async () => {
    const body = await expectError(
      await gatewayFetch('/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
      }),
      400,
      { code: 'provider_not_selected' },
    );
    expect(body.error.message).toMatch(/x-gateway-provider/);
    await expectError(await gatewayFetch('/models'), 400, { code: 'provider_not_selected' });
    await expectError(await chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { 'x-gateway-provider': 'nope' }), 400, {
      code: 'unknown_provider',
    });
  });

  it('refuses a custom host that is not an http(s) base URL', async () => {
    for (const host of ['ftp://example.com', 'not a url', 'http://user:pw@example.com', 'http://example.com/v1?x=1']) {
      await expectError(await chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { 'x-gateway-custom-host': host }), 400, {
        code: 'invalid_custom_host',
      });
    }
  });

  it('answers 502 when the provider cannot be reached', async () => {
    const port = await closedPort();
    const body = await expectError(
      await chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { 'x-gateway-custom-host': `http://127.0.0.1:${port}/v1` }),
      502,
      { code: 'provider_unreachable' },
    );
    expect(body.error.provider).toBe('openai');
  });

  it('keeps the provider status and message on unified routes', async () => {
    const body = await expectError(await chat({ model: 'error-400', messages: [{ role: 'user', content: 'x' }] }), 400);
    expect(body.error.provider).toBe('openai');
    const server = await expectError(await chat({ model: 'error-503', messages: [{ role: 'user', content: 'x' }], stream: true }), 503);
    expect(server.error.provider).toBe('openai');
  });

  it('never answers 500 to odd input', async () => {
    const odd = [
      '',
      'null',
      '"text"',
      '{"model":1,"messages":"x"}',
      '{"model":"m","messages":[null]}',
      '{"model":"m","messages":[{"role":"user"}],"stream":"yes"}',
      '\u0000\u0001',
    ];
    for (const body of odd) {
      const response = await chat(body);
      expect(response.status, body).toBeGreaterThanOrEqual(400);
      expect(response.status, body).toBeLessThan(500);
    }
  });
});

describe('fuzzing the unified and pass-through routes', () => {
  it('answers random bodies and headers with a status below 500, never hanging', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/chat/completions', '/completions', '/embeddings', '/api-keys', '/anything/else'),
        fc.oneof(
          fc.json(),
          fc.string(),
          fc.jsonValue().map((value) => JSON.stringify({ model: 'error-400', messages: value, input: value, prompt: value })),
        ),
        fc.record({
          metadata: fc.option(fc.string(), { nil: undefined }),
          provider: fc.option(fc.constantFrom('openai', 'groq', '@slug', 'bogus', ''), { nil: undefined }),
          contentType: fc.constantFrom('application/json', 'text/plain', ''),
        }),
        async (path, body, headers) => {
          const response = await gatewayFetch(path, {
            method: 'POST',
            body,
            signal: AbortSignal.timeout(10_000),
            headers: {
              ...(headers.contentType ? { 'content-type': headers.contentType } : {}),
              ...(headers.metadata !== undefined ? { 'x-gateway-metadata': headers.metadata } : {}),
              ...(headers.provider !== undefined ? { 'x-gateway-provider': headers.provider } : {}),
              authorization: 'Bearer sk',
            },
          });
          await response.arrayBuffer();
          expect(response.status).toBeLessThan(500);
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);
});

describe('input that used to earn a 500 or a misleading answer', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  /** `depth` arrays nested in one another around a value. */
  const nested = (depth: number, inner = '1') => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

  it(`refuses JSON bodies nested deeper than ${maxJsonDepth} levels with a 400, wherever the nesting is`, async () => {
    const deepTool = `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${'{"type":"object","properties":{"a":'.repeat(10_000)}{}${'}}'.repeat(10_000)}}}]}`;
    const body = await expectError(await chat(deepTool, { 'x-gateway-provider': 'anthropic' }), 400, { code: 'json_too_deep' });
    expect(body.error.message).toMatch(new RegExp(`more than ${maxJsonDepth} levels`));
    await expectError(await chat(nested(maxJsonDepth + 1)), 400, { code: 'json_too_deep' });
    // Brackets inside strings (escaped quotes too) are text, not nesting.
    const text = await chat(
      { model: 'gpt-4o', messages: [{ role: 'user', content: `"\\"${'[{'.repeat(5_000)}` }] },
      { 'x-gateway-custom-host': `${upstream.url}/v1` },
    );
    expect(text.status).toBe(200);
    await text.text();
    const configs = await gatewayFetch('/configs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"name":"deep","config":${nested(1_000, '{}')}}`,
    });
    await expectError(configs, 400, { code: 'json_too_deep' });
  });

  it('accepts JSON right at the nesting limit', async () => {
    const response = await chat(
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], metadata_probe: JSON.parse(nested(maxJsonDepth - 2)) },
      { 'x-gateway-custom-host': `${upstream.url}/v1` },
    );
    expect(response.status).toBe(200);
    await response.text();
  });

  it('refuses JSON headers nested too deeply with a 400 naming the header', async () => {
    await expectError(
      await chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-config': `{"targets":${nested(500, '{}')}}` }),
      400,
      { param: 'x-gateway-config', code: 'AB01', message: /levels deep/ },
    );
    await expectError(await chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-metadata': `{"a":${nested(500)}}` }), 400, {
      param: 'x-gateway-metadata',
      message: /levels deep/,
    });
    await expectError(await chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-forward-headers': nested(500) }), 400, {
      param: 'x-gateway-forward-headers',
    });
  });

  it('says a config is a JSON object or a saved id when x-gateway-config is other JSON', async () => {
    for (const value of ['null', '[]', '1', '"cfg_x"', 'true', 'not a config']) {
      const body = await expectError(await chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-config': value }), 400, {
        param: 'x-gateway-config',
        code: 'invalid_config_header',
      });
      expect(body.error.message).toMatch(/JSON object/);
      expect(body.error.message).toMatch(/saved config/);
      expect(body.error.message).not.toMatch(/does not exist/);
    }
  });

  it('says model must be a string when it is not one', async () => {
    for (const model of [123, true, ['gpt-4o'], { name: 'gpt-4o' }]) {
      await expectError(await chat({ model, messages: [{ role: 'user', content: 'hi' }] }), 400, {
        param: 'model',
        code: 'invalid_type',
        message: /must be a string/,
      });
    }
    await expectError(await chat({ model: 'm', messages: 'hello' }), 400, { param: 'messages', code: 'invalid_type', message: /must be an array/ });
  });

  it('says the provider redirected, and where, instead of "not JSON"', async () => {
    upstream.script('/moved', [{ status: 302, body: '', headers: { location: 'https://elsewhere.example/v1/chat/completions' } }]);
    const body = await expectError(
      await chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-custom-host': `${upstream.url}/moved/v1` }),
      502,
      { code: 'provider_redirect' },
    );
    expect(body.error.message).toMatch(/redirect \(302\) to https:\/\/elsewhere\.example\/v1\/chat\/completions/);
    expect(body.error.message).not.toMatch(/JSON/);
  });

  it('refuses a list cursor that cannot be an id, on every list route', async () => {
    for (const path of ['/logs', '/api-keys', '/configs', '/providers', '/logs/some-trace']) {
      for (const after of ['x'.repeat(2_000), '../etc', 'log_ABC']) {
        await expectError(await gatewayFetch(`${path}?after=${encodeURIComponent(after)}`), 400, { param: 'after', code: 'invalid_cursor' });
      }
    }
  });

  it('names the root as the last used option when no config is sent', async () => {
    const response = await chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-gateway-custom-host': `${upstream.url}/v1` });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config');
    await response.text();
  });
});
