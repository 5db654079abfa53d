import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch } from '../support/gateway-client';
import { rawExchange } from '../support/raw-http';
import { spawnGateway, type SpawnedGateway } from '../support/spawn-gateway';

const started: SpawnedGateway[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(started.map((gateway) => gateway.stop()));
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function start(environment: Record<string, string | undefined>) {
  const gateway = await spawnGateway(environment);
  started.push(gateway);
  return gateway;
}

const withoutSharedEmulators = { GATEWAY_DYNAMODB_ENDPOINT: undefined, GATEWAY_SQS_ENDPOINT: undefined, GATEWAY_S3_ENDPOINT: undefined };

describe('the local runtime', () => {
  it('creates an owner key on first start, prints it once, and keeps its data across a restart', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-first-start-'));
    dirs.push(dataDir);
    const first = await start({ GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_KEY: undefined, ...withoutSharedEmulators });
    const key = /Owner API key \(shown once; store it now\): (gwk_\S+)/.exec(first.output())?.[1];
    expect(key).toBeDefined();
    const created = await fetch(`${first.url}/api-keys`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': key!, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'survives restarts', role: 'member' }),
    });
    expect(created.status).toBe(200);
    await first.stop();

    const second = await start({ GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_KEY: undefined, ...withoutSharedEmulators });
    expect(second.output()).not.toContain('Owner API key');
    const list = (await (await fetch(`${second.url}/api-keys`, { headers: { 'x-gateway-api-key': key! } })).json()) as any;
    expect(list.data.map((entry: any) => entry.name)).toEqual(['survives restarts', 'First owner key']);
    await second.stop();
  });

  it('installs GATEWAY_ADMIN_KEY idempotently and never prints it', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-admin-key-'));
    dirs.push(dataDir);
    const adminKey = 'gwk_operator_chosen_admin_key_123456';
    for (let run = 0; run < 2; run++) {
      const gateway = await start({ GATEWAY_DATA_DIR: dataDir, GATEWAY_ADMIN_KEY: adminKey, ...withoutSharedEmulators });
      expect(gateway.output()).not.toContain(adminKey);
      const list = (await (await fetch(`${gateway.url}/api-keys`, { headers: { 'x-gateway-api-key': adminKey } })).json()) as any;
      expect(list.data).toHaveLength(1);
      await gateway.stop();
    }
  });

  it('keeps a revoked GATEWAY_ADMIN_KEY revoked across a restart, and warns at start', async () => {
    const { endpoints, dataDir } = env();
    const shared = {
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_DYNAMODB_ENDPOINT: endpoints.dynamodb,
      GATEWAY_SQS_ENDPOINT: endpoints.sqs,
      GATEWAY_S3_ENDPOINT: endpoints.s3,
    };
    const operatorKey = `gwk_operator_key_revoked_later_${Date.now()}`;
    const first = await start({ ...shared, GATEWAY_ADMIN_KEY: operatorKey });
    expect(first.errors()).not.toMatch(/revoked/);
    const list = (await (await fetch(`${first.url}/api-keys?limit=100`, { headers: { 'x-gateway-api-key': operatorKey } })).json()) as any;
    const installed = list.data.find(
      (key: any) => key.name === 'Owner key (GATEWAY_ADMIN_KEY)' && key.status === 'active' && key.hint === `…${operatorKey.slice(-4)}`,
    );
    const revoked = await fetch(`${first.url}/api-keys/${installed.id}`, { method: 'DELETE', headers: { 'x-gateway-api-key': operatorKey } });
    expect(revoked.status).toBe(200);
    await first.stop();

    const second = await start({ ...shared, GATEWAY_ADMIN_KEY: operatorKey });
    expect(second.errors()).toContain(`Warning: GATEWAY_ADMIN_KEY is the owner key ${installed.id}, which was revoked at `);
    expect(second.errors()).toMatch(/stays revoked.*set GATEWAY_ADMIN_KEY to a new value \(20 to 256 characters\) and start again/);
    expect(second.output() + second.errors()).not.toContain(operatorKey);
    const refused = await fetch(`${second.url}/logs`, { headers: { 'x-gateway-api-key': operatorKey } });
    expect(refused.status).toBe(401);
  });

  it('lets two gateway processes share state through running emulators', async () => {
    const { endpoints, adminKey, dataDir } = env();
    const second = await start({
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_KEY: adminKey,
      GATEWAY_DYNAMODB_ENDPOINT: endpoints.dynamodb,
      GATEWAY_SQS_ENDPOINT: endpoints.sqs,
      GATEWAY_S3_ENDPOINT: endpoints.s3,
    });
    const created = (await (
      await fetch(`${env().gatewayUrl}/api-keys`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'shared', role: 'member' }),
      })
    ).json()) as any;
    const response = await fetch(`${second.url}/logs`, { headers: { 'x-gateway-api-key': created.key } });
    expect(response.status).toBe(200);
  });

  it('refuses a malformed percent-escape anywhere in the path with 400 and the error body, as API Gateway does', async () => {
    const passThrough = { 'x-gateway-provider': 'openai', authorization: 'Bearer sk' };
    for (const path of ['/models/%zz', '/models%', '/x/%E0%A4%A/y', '/configs/%c3%28']) {
      const response = await gatewayFetch(path, { headers: passThrough });
      expect(response.status, path).toBe(400);
      expect((await response.json()).error, path).toMatchObject({ type: 'invalid_request_error', code: 'invalid_path' });
    }
    const outside = await fetch(`${env().gatewayUrl.replace(/\/v1$/, '')}/nowhere/%`);
    expect(outside.status).toBe(400);
    // A well-formed escape still reaches the route decoded once: `%25` is a literal % in the id.
    expect((await gatewayFetch('/configs/cfg_%25zz')).status).toBe(404);
  });
});

describe('client-supplied names that Object.prototype also has', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  it('forwards only headers that were sent, even when x-gateway-forward-headers names a prototype member', async () => {
    const response = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-custom-host': `${upstream.url}/proto/v1`,
        authorization: 'Bearer sk-test',
        'x-gateway-forward-headers': 'constructor,toString,valueOf,x-sent',
        'x-sent': 'yes',
      },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(200);
    await response.json();
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers['x-sent']).toBe('yes');
    expect(Object.keys(sent.headers).filter((name) => ['constructor', 'tostring', 'valueof'].includes(name))).toEqual([]);
  });

  // Headers are given as entries: in an object literal, `__proto__` would set the prototype instead.
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
    it(`treats a header or query parameter named ${name} as an ordinary one`, async () => {
      const { gatewayUrl, adminKey } = env();
      for (const [query, headers] of [
        [`?${name}=q`, []],
        ['', [[name, 'h']]],
        [
          `?${name}=q&${name}=r`,
          [
            [name, 'h1'],
            [name, 'h2'],
          ],
        ],
      ] as [string, [string, string][]][]) {
        const where = `${name}: query ${JSON.stringify(query)}, headers ${JSON.stringify(headers)}`;
        const configs = await fetch(`${gatewayUrl}/configs${query}`, { headers: [['x-gateway-api-key', adminKey], ...headers] });
        expect(configs.status, where).toBe(200);
        expect(((await configs.json()) as any).object, where).toBe('list');

        const chat = await fetch(`${gatewayUrl}/chat/completions${query}`, {
          method: 'POST',
          headers: [
            ['x-gateway-api-key', adminKey],
            ['x-gateway-provider', 'openai'],
            ['authorization', 'Bearer sk-test'],
            ['content-type', 'application/json'],
            ...headers,
          ],
          body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(chat.status, where).toBe(200);
        expect(((await chat.json()) as any).choices[0].message.content, where).toBe('echo: hi');

        // Pass-through hands the query and the header to the provider as they came (fetch sends a
        // repeated header as one, its values joined).
        const echoed = await fetch(`${gatewayUrl}/echo${query}`, {
          headers: [['x-gateway-api-key', adminKey], ['x-gateway-provider', 'openai'], ['authorization', 'Bearer sk-test'], ...headers],
        });
        expect(echoed.status, where).toBe(200);
        const echo = (await echoed.json()) as any;
        expect(echo.url, where).toBe(`/openai/v1/echo${query}`);
        // fetch itself never sends a header named `__proto__`, so only the others can be checked here.
        if (headers.length > 0 && name !== '__proto__') expect(echo.headers[name.toLowerCase()], where).toBe(headers.map(([, value]) => value).join(', '));
      }
    });
  }
});

describe('requests the HTTP parser refuses', () => {
  const target = () => env().gatewayUrl;

  it('answers raw non-ASCII or control bytes in the request target with a JSON 400 invalid_path, and closes', async () => {
    for (const path of ['/v1/caf\xe9', '/v1/caf\xc3\xa9', '/v1/a\x01b', '/v1/a\x7fb', '/v1/configs?q=\xe9']) {
      const answer = await rawExchange(target(), `GET ${path} HTTP/1.1\r\nHost: localhost\r\nx-gateway-api-key: ${env().adminKey}\r\n\r\n`);
      expect(answer.status, path).toBe(400);
      expect(answer.headers['content-type'], path).toBe('application/json');
      expect(answer.headers.connection, path).toBe('close');
      expect(Number(answer.headers['content-length']), path).toBe(answer.body.length);
      const body = JSON.parse(answer.body.toString('utf8'));
      expect(body, path).toEqual({
        error: { message: expect.stringMatching(/percent-encode/i), type: 'invalid_request_error', param: null, code: 'invalid_path' },
      });
    }
  });

  it('answers a refused HEAD request without a body', async () => {
    const answer = await rawExchange(target(), `HEAD /v1/logs/\xc2\x80 HTTP/1.1\r\nHost: localhost\r\nx-gateway-api-key: ${env().adminKey}\r\n\r\n`);
    expect(answer.status).toBe(400);
    expect(Number(answer.headers['content-length'])).toBeGreaterThan(0);
    expect(answer.body.length).toBe(0);
  });

  it('answers other malformed requests with the JSON error body too', async () => {
    const cases: [string, string, number, string][] = [
      ['a raw space in the target', 'GET /v1/a b HTTP/1.1\r\nHost: localhost\r\n\r\n', 400, 'invalid_http_request'],
      ['a NUL in a header value', 'GET /v1/configs HTTP/1.1\r\nHost: localhost\r\nx-thing: a\x00b\r\n\r\n', 400, 'invalid_request_header'],
      ['a header name with a space', 'GET /v1/configs HTTP/1.1\r\nHost: localhost\r\nx thing: a\r\n\r\n', 400, 'invalid_request_header'],
      ['a malformed method', 'G@T /v1/configs HTTP/1.1\r\nHost: localhost\r\n\r\n', 400, 'invalid_http_request'],
      ['headers above what the server parses', `GET /v1/configs HTTP/1.1\r\nHost: localhost\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
    ];
    for (const [name, request, status, code] of cases) {
      const answer = await rawExchange(target(), request);
      expect(answer.status, name).toBe(status);
      expect(answer.headers['content-type'], name).toBe('application/json');
      const body = JSON.parse(answer.body.toString('utf8'));
      expect(body.error, name).toMatchObject({ type: 'invalid_request_error', param: null, code });
      expect(body.error.message.length, name).toBeGreaterThan(20);
    }
  });

  it('still answers a malformed percent-escape sent on the wire with the JSON 400 invalid_path', async () => {
    const answer = await rawExchange(target(), 'GET /v1/configs/%zz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body.toString('utf8')).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_path',
      message: expect.stringContaining('%25'),
    });
  });

  it('reads a target that starts with // as a path, not as a host', async () => {
    for (const path of ['//', '//evil.example/v1/models']) {
      const answer = await rawExchange(target(), `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      expect(answer.status, path).toBe(404);
      expect(JSON.parse(answer.body.toString('utf8')).error, path).toMatchObject({
        type: 'invalid_request_error',
        code: 'route_not_found',
        message: expect.stringContaining(path),
      });
    }
  });

  it('keeps serving well-formed requests on other connections', async () => {
    expect((await gatewayFetch('/configs')).status).toBe(200);
  });
});
