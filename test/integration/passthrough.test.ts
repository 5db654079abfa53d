import { gzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeBinaryBytes, SSE_RAW_BODY, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, waitForLogs } from '../support/gateway-client';
import { eventually } from '../support/poll';
import { readRecordingBytes, recordingsPresent } from '../support/recordings';

describe('pass-through', () => {
  let upstream: FakeUpstream;
  let base: string;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    base = `${upstream.url}/pt/v1`;
  });
  afterAll(() => upstream.close());

  const call = (method: string, path: string, options: { body?: Buffer | string; headers?: Record<string, string> } = {}) =>
    request(`${env().gatewayUrl}${path}`, {
      method: method as 'GET',
      body: options.body,
      headers: { 'x-gateway-api-key': env().adminKey, 'x-gateway-custom-host': base, authorization: 'Bearer sk-pt', ...options.headers },
    });

  it('forwards method, path, query, body and headers to {base URL}/{path}', async () => {
    const body = Buffer.from('{"anything":["goes",1,{"x":null}]}');
    const response = await call('PUT', '/assistants/asst_1/echo?limit=10&order=desc&tag=a&tag=b', {
      body,
      headers: { 'content-type': 'application/json', 'openai-beta': 'assistants=v2', 'x-gateway-trace-id': 'pt-trace' },
    });
    expect(response.statusCode).toBe(200);
    const echoed = (await response.body.json()) as any;
    expect(echoed.method).toBe('PUT');
    expect(echoed.url).toBe('/pt/v1/assistants/asst_1/echo?limit=10&order=desc&tag=a&tag=b');
    expect(Buffer.from(echoed.bodyBase64, 'base64').equals(body)).toBe(true);
    expect(echoed.headers['openai-beta']).toBe('assistants=v2');
    expect(echoed.headers.authorization).toBe('Bearer sk-pt');
    expect(Object.keys(echoed.headers).filter((name) => name.startsWith('x-gateway-'))).toEqual([]);
    expect(response.headers['x-gateway-trace-id']).toBe('pt-trace');
    expect(response.headers['x-gateway-provider']).toBe('openai');
  });

  it('keeps the path encoding of spaces and colons', async () => {
    const response = await call('GET', '/models/gemini-pro:generateContent/a%20b/echo');
    expect(((await response.body.json()) as any).url).toBe('/pt/v1/models/gemini-pro:generateContent/a%20b/echo');
  });

  it('forwards GET and DELETE', async () => {
    for (const method of ['GET', 'DELETE']) {
      const response = await call(method, '/files/file-1/echo');
      expect(response.statusCode).toBe(200);
      expect(((await response.body.json()) as any).method).toBe(method);
    }
  });

  it('returns a binary body byte for byte', async () => {
    const response = await call('GET', '/binary?size=300000');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/octet-stream');
    const bytes = Buffer.from(await response.body.arrayBuffer());
    expect(bytes.equals(fakeBinaryBytes(300000))).toBe(true);
  });

  it('relays an SSE body byte for byte, as it arrives', async () => {
    const response = await call('GET', '/sse-raw?delayMs=150');
    expect(response.statusCode).toBe(200);
    const arrivals: number[] = [];
    let text = '';
    for await (const chunk of response.body) {
      arrivals.push(performance.now());
      text += chunk.toString();
    }
    expect(text).toBe(SSE_RAW_BODY);
    // Not buffered whole: the parts arrive spread over the upstream's pauses.
    expect(arrivals.length).toBeGreaterThan(1);
    expect(arrivals.at(-1)! - arrivals[0]).toBeGreaterThan(300);
  });

  // One test body for the sample and the recording; the recording case is declared skipped where
  // the recordings are absent and reads them only inside the test.
  const replaysUnchanged = async (sent: Buffer, path: string) => {
    upstream.script(`/pt/v1${path}`, [{ rawSse: sent, splitEvery: 97 }]);
    const response = await call('POST', path, { body: '{}', headers: { 'content-type': 'application/json' } });
    expect(Buffer.from(await response.body.arrayBuffer()).equals(sent)).toBe(true);
  };

  it('replays a provider stream unchanged (written inline)', async () => {
    const events = ['{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":"}}]}}]}', '[DONE]'];
    await replaysUnchanged(Buffer.from(events.map((data) => `data: ${data}\n\n`).join('')), '/streamed');
  });

  it.skipIf(!recordingsPresent)('replays a provider stream unchanged (recordings)', async () => {
    await replaysUnchanged(readRecordingBytes('openai_chat_stream_tool_call_with_usage.sse'), '/recorded');
  });

  it('keeps the provider status, error body and headers, and drops hop-by-hop ones', async () => {
    upstream.script('/pt/v1/thing', [
      { status: 418, body: 'not json at all', headers: { 'x-provider-thing': 'kept', 'content-type': 'text/plain', connection: 'close' } },
    ]);
    const response = await call('POST', '/thing', { body: 'x', headers: { 'content-type': 'text/plain' } });
    expect(response.statusCode).toBe(418);
    expect(await response.body.text()).toBe('not json at all');
    expect(response.headers['x-provider-thing']).toBe('kept');
    expect(response.headers['content-type']).toBe('text/plain');
  });

  it('never decompresses an encoded body', async () => {
    const gz = gzipSync(Buffer.from('{"compressed":true}'));
    upstream.script('/pt/v1/gz', [{ status: 200, body: gz, headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } }]);
    const response = await call('GET', '/gz');
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(Buffer.from(await response.body.arrayBuffer()).equals(gz)).toBe(true);
  });

  it('refuses methods other than GET, POST, PUT and DELETE', async () => {
    const response = await call('PATCH', '/files/echo', { body: '{}' });
    expect(response.statusCode).toBe(405);
    await response.body.dump();
  });
});

describe('pass-through paths stay under the provider base URL', () => {
  let upstream: FakeUpstream;
  let slug: string;
  const storedKey = `sk-tenant-a-${Date.now()}`;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    slug = `tenant-a-${Date.now().toString(36)}`;
    const created = await fetch(`${env().gatewayUrl}/providers`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': env().adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ slug, provider: 'openai', custom_host: `${upstream.url}/tenant-a/v1`, api_key: storedKey }),
    });
    expect(created.status).toBe(200);
  });
  afterAll(() => upstream.close());

  /** A request whose path goes out exactly as written (no client-side dot-segment resolution). */
  const rawGet = (path: string) =>
    new Promise<{ status: number; body: any }>((resolve, reject) => {
      const url = new URL(env().gatewayUrl);
      const request = httpRequest(
        { host: url.hostname, port: url.port, method: 'GET', path, headers: { 'x-gateway-api-key': env().adminKey, 'x-gateway-provider': `@${slug}` } },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') }));
        },
      );
      request.on('error', reject);
      request.end();
    });

  it.each([
    '/v1/x/%2e%2e%2f%2e%2e%2f%2e%2e%2fadmin%2fsecrets?all=1',
    '/v1/x/%2e%2e/%2e%2e/admin/secrets',
    '/v1/x/%2E%2E%2F%2E%2E%2Fadmin',
    '/v1/%2e/echo',
    '/v1/x/%252e%252e%252f%252e%252e%252fadmin',
    '/v1/x/..%5c..%5cadmin',
  ])('refuses %s with a 400 and sends nothing', async (path) => {
    const before = upstream.requests.length;
    const { status, body } = await rawGet(path);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_path', type: 'invalid_request_error' });
    expect(body.error.message).toMatch(/under the provider base URL/);
    expect(upstream.requests.length).toBe(before);
  });

  it('refuses raw dot segments before anything is sent', async () => {
    const before = upstream.requests.length;
    for (const path of ['/v1/x/../../../admin/secrets', '/v1/./echo', '/v1/configs/../echo']) {
      const { status, body } = await rawGet(path);
      expect(status).toBe(400);
      expect(body.error.code).toBe('invalid_path');
    }
    expect(upstream.requests.length).toBe(before);
  });

  it('still forwards paths that merely contain dots or encoded characters', async () => {
    const { status, body } = await rawGet('/v1/files/a..b/.well/v1.2/%25zz/echo');
    expect(status).toBe(200);
    expect(body.url).toBe('/tenant-a/v1/files/a..b/.well/v1.2/%25zz/echo');
    expect(body.headers.authorization).toBe(`Bearer ${storedKey}`);
  });
});

describe('pass-through with a config reads provider bodies within bounds', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  const target = (prefix: string) => ({ provider: 'openai', api_key: 'sk-pt', custom_host: `${upstream.url}${prefix}/v1` });
  const call = (path: string, config: unknown, headers: Record<string, string> = {}) =>
    request(`${env().gatewayUrl}${path}`, {
      method: 'POST',
      body: '{"x":1}',
      headers: { 'x-gateway-api-key': env().adminKey, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config), ...headers },
    });

  /** A provider that sends an error status and its headers, then nothing, until its connection goes. */
  const errorThenStall = (state: { closed: boolean }, status = 503) => ({
    handle: (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': '200' });
      res.write('{"error":');
      res.on('close', () => (state.closed = true));
    },
  });

  it('ends an error body that stalls with the timeout error and aborts the provider call', async () => {
    const state = { closed: false };
    upstream.script('/stall-error', [errorThenStall(state)]);
    const started = Date.now();
    const response = await call('/files/stall-error', { ...target('/stall-error'), retry: { attempts: 0 } }, { 'x-gateway-request-timeout': '700' });
    expect(response.statusCode).toBe(408);
    const body = (await response.body.json()) as any;
    expect(body.error).toMatchObject({ type: 'timeout_error', code: 'timeout_error', provider: 'openai' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await eventually(() => state.closed)).toBe(true);
  });

  it('falls back from a target whose error body stalls past the config request_timeout', async () => {
    const state = { closed: false };
    upstream.script('/stall-first', [errorThenStall(state, 500)]);
    const response = await call('/stall/echo', {
      strategy: { mode: 'fallback' },
      request_timeout: 700,
      targets: [target('/stall-first'), target('/stall-second')],
    });
    expect(response.statusCode).toBe(200);
    expect(((await response.body.json()) as any).url).toBe('/stall-second/v1/stall/echo');
    expect(response.headers['x-gateway-last-used-option-index']).toBe('config.targets[1]');
    expect(await eventually(() => state.closed)).toBe(true);
  });

  it('answers 502 when the connection breaks in the middle of an error body, and retries it like a network error', async () => {
    const cut = {
      handle: (_req: unknown, res: import('node:http').ServerResponse) => {
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"error":{"mess');
        setTimeout(() => res.socket?.destroy(), 30);
      },
    };
    upstream.script('/cut-error', [cut]);
    const response = await call('/files/cut-error', { ...target('/cut-error'), retry: { attempts: 0 } });
    expect(response.statusCode).toBe(502);
    const body = (await response.body.json()) as any;
    expect(body.error).toMatchObject({ type: 'provider_error', code: 'provider_connection_broken', provider: 'openai' });
    expect(body.error.message).toMatch(/connection to openai broke/);

    upstream.script('/cut-then-ok', [cut]);
    const retried = await call('/cut-then-ok/echo', { ...target('/cut-then-ok'), retry: { attempts: 1 } });
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['x-gateway-retry-attempt-count']).toBe('1');
    await retried.body.dump();
  });

  it('ends a 200 answer that sends its headers and then nothing (no config needed), and logs the timeout', async () => {
    const traceId = `pt-silent-${Date.now()}`;
    const state = { closed: false };
    upstream.script('/silent', [
      {
        handle: (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.flushHeaders();
          res.on('close', () => (state.closed = true));
        },
      },
    ]);
    const started = Date.now();
    const response = await request(`${env().gatewayUrl}/anything`, {
      method: 'GET',
      headers: {
        'x-gateway-api-key': env().adminKey,
        'x-gateway-custom-host': `${upstream.url}/silent/v1`,
        'x-gateway-request-timeout': '700',
        'x-gateway-trace-id': traceId,
      },
    });
    expect(response.statusCode).toBe(200);
    const text = await response.body.text().catch(() => 'cut off');
    expect(['', 'cut off']).toContain(text);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await eventually(() => state.closed)).toBe(true);
    const [log] = await waitForLogs(traceId);
    expect(log.error.code).toBe('timeout_error');
  });
});

/**
 * A provider that writes the given response bytes whatever it is asked (after reading the request
 * head and its content-length body), then closes the connection.
 */
async function rawProvider(answer: () => string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createNetServer((socket) => {
    let received = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received.toString('latin1', 0, end))?.[1] ?? 0);
      if (received.length < end + 4 + length) return;
      socket.end(Buffer.from(answer(), 'latin1'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('provider response headers that cannot be sent on', () => {
  const badHeaders = 'x-bad-nul: a\x00b\r\nx-bad-ctl: a\x01b\r\nx-bad-cr: a\rb\r\nx-bad-lf: a\nb\r\nx-bad-del: a\x7fb\r\n';
  const call = (base: string, method: string, path: string, body?: string) =>
    request(`${env().gatewayUrl}${path}`, {
      method: method as 'GET',
      body,
      headers: { 'x-gateway-api-key': env().adminKey, 'x-gateway-custom-host': base, authorization: 'Bearer sk-raw', 'content-type': 'application/json' },
    });

  it('drops a header whose value has NUL, CR, LF or another control character, and relays the rest of the answer', async () => {
    const models = '{"object":"list","data":[{"id":"m1","object":"model"}]}';
    const provider = await rawProvider(
      () =>
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${badHeaders}x-good: yes\r\nconstructor: c1\r\ncontent-length: ${models.length}\r\nconnection: close\r\n\r\n${models}`,
    );
    try {
      const response = await call(`${provider.url}/v1`, 'GET', '/models');
      expect(response.statusCode).toBe(200);
      expect(await response.body.text()).toBe(models);
      expect(response.headers['x-good']).toBe('yes');
      expect(Object.hasOwn(response.headers, 'constructor') && response.headers.constructor).toBe('c1');
      expect(Object.keys(response.headers).filter((name) => name.startsWith('x-bad-'))).toEqual([]);
      expect(response.headers['x-gateway-provider']).toBe('openai');
    } finally {
      await provider.close();
    }
  });

  it('does the same for a streamed (chunked) answer', async () => {
    const provider = await rawProvider(
      () =>
        `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n${badHeaders}transfer-encoding: chunked\r\nconnection: close\r\n\r\n6\r\ndata: \r\n8\r\n[DONE]\n\n\r\n0\r\n\r\n`,
    );
    try {
      const response = await call(`${provider.url}/v1`, 'POST', '/threads/runs', '{}');
      expect(response.statusCode).toBe(200);
      expect(await response.body.text()).toBe('data: [DONE]\n\n');
      expect(Object.keys(response.headers).filter((name) => name.startsWith('x-bad-'))).toEqual([]);
    } finally {
      await provider.close();
    }
  });

  it('drops such a header on unified routes too (a relayed request id)', async () => {
    const completion = JSON.stringify({
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
    });
    const provider = await rawProvider(
      () =>
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-request-id: req\x00id\r\nx-ratelimit-remaining-requests: 7\r\ncontent-length: ${completion.length}\r\nconnection: close\r\n\r\n${completion}`,
    );
    try {
      const response = await call(
        `${provider.url}/v1`,
        'POST',
        '/chat/completions',
        JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      );
      expect(response.statusCode).toBe(200);
      expect(((await response.body.json()) as any).choices[0].message.content).toBe('hi');
      expect(response.headers['x-request-id']).toBeUndefined();
      expect(response.headers['x-ratelimit-remaining-requests']).toBe('7');
    } finally {
      await provider.close();
    }
  });

  it('refuses an answer whose framing header has such a character: 502 with the error body', async () => {
    const provider = await rawProvider(() => 'HTTP/1.1 200 OK\r\ncontent-length: 2\x00\r\nconnection: close\r\n\r\nok');
    try {
      const response = await call(`${provider.url}/v1`, 'GET', '/models');
      expect(response.statusCode).toBe(502);
      const body = (await response.body.json()) as any;
      expect(body.error).toMatchObject({ type: 'provider_error', code: 'provider_unreachable' });
      expect(body.error.message).toMatch(/invalid HTTP response.*content-length/);
    } finally {
      await provider.close();
    }
  });
});

describe('pass-through of a provider’s Files API', () => {
  let upstream: FakeUpstream;
  let base: string;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    base = `${upstream.url}/ptf/v1`;
  });
  afterAll(() => upstream.close());

  // The /v1/files routes take precedence over /v1/{proxy+}: a request that selects a provider
  // must still reach the provider's own files API, answered as the provider answers.
  const providerHeaders = () => ({
    'x-gateway-api-key': env().adminKey,
    'x-gateway-provider': 'openai',
    'x-gateway-custom-host': base,
    authorization: 'Bearer sk-ptf',
  });
  const providerFile = { id: 'file-abc123', object: 'file', bytes: 12, created_at: 1715367049, filename: 'in.jsonl', purpose: 'batch', status: 'processed' };

  it('sends POST /v1/files (multipart) to the provider unchanged and relays its answer', async () => {
    upstream.script('/ptf/v1/files', [{ status: 200, json: providerFile, headers: { 'x-request-id': 'req_files_1' } }]);
    const body = Buffer.concat([
      Buffer.from('--b0undary\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--b0undary\r\n'),
      Buffer.from('Content-Disposition: form-data; name="file"; filename="in.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n'),
      Buffer.from([0, 1, 2, 255, 254, 13, 10, 45, 45, 98, 0, 7]),
      Buffer.from('\r\n--b0undary--\r\n'),
    ]);
    const response = await request(`${env().gatewayUrl}/files`, {
      method: 'POST',
      body,
      headers: { ...providerHeaders(), 'content-type': 'multipart/form-data; boundary=b0undary' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-request-id']).toBe('req_files_1');
    expect(response.headers['x-gateway-provider']).toBe('openai');
    expect(await response.body.json()).toEqual(providerFile);
    const sent = upstream.requests.find((recorded) => recorded.path === '/ptf/v1/files')!;
    expect(sent.method).toBe('POST');
    expect(sent.body.equals(body)).toBe(true);
    expect(sent.headers['content-type']).toBe('multipart/form-data; boundary=b0undary');
    expect(sent.headers.authorization).toBe('Bearer sk-ptf');
  });

  it('passes GET /v1/files, a provider file, its content and DELETE through with the query', async () => {
    for (const [method, path] of [
      ['GET', '/files?purpose=batch&limit=3'],
      ['GET', '/files/file-abc123'],
      ['GET', '/files/file-abc123/content'],
      ['DELETE', '/files/file-abc123'],
    ] as const) {
      const answer = `{"answer":"${method} ${path}"}`;
      upstream.script(`/ptf/v1${path.split('?')[0]}`, [{ status: 200, body: answer, headers: { 'content-type': 'application/json' } }]);
      const response = await request(`${env().gatewayUrl}${path}`, { method, headers: providerHeaders() });
      expect(response.statusCode, `${method} ${path}`).toBe(200);
      expect(await response.body.text()).toBe(answer);
      expect(upstream.requests.at(-1)).toMatchObject({ method, path: `/ptf/v1${path}` });
    }
  });

  // The /v1/uploads routes too: without a gateway upload id, provider headers mean the provider's.
  it('sends POST /v1/uploads and a provider upload’s parts, complete and cancel to the provider unchanged', async () => {
    const created = { id: 'upload_abc', object: 'upload', bytes: 3, created_at: 1719184911, filename: 'in.jsonl', purpose: 'batch', status: 'pending' };
    upstream.script('/ptf/v1/uploads', [{ status: 200, json: created, headers: { 'x-request-id': 'req_uploads_1' } }]);
    const body = '{"filename":"in.jsonl","purpose":"batch","bytes":3,"mime_type":"application/jsonl"}';
    const response = await request(`${env().gatewayUrl}/uploads`, {
      method: 'POST',
      body,
      headers: { ...providerHeaders(), 'content-type': 'application/json' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-request-id']).toBe('req_uploads_1');
    expect(await response.body.json()).toEqual(created);
    const sent = upstream.requests.find((recorded) => recorded.path === '/ptf/v1/uploads')!;
    expect(sent.method).toBe('POST');
    expect(sent.body.toString()).toBe(body);
    expect(sent.headers.authorization).toBe('Bearer sk-ptf');

    for (const path of ['/uploads/upload_abc/parts', '/uploads/upload_abc/complete', '/uploads/upload_abc/cancel']) {
      const answer = `{"answer":"${path}"}`;
      upstream.script(`/ptf/v1${path}`, [{ status: 200, body: answer, headers: { 'content-type': 'application/json' } }]);
      const forwarded = await request(`${env().gatewayUrl}${path}`, {
        method: 'POST',
        body: '{}',
        headers: { ...providerHeaders(), 'content-type': 'application/json' },
      });
      expect(forwarded.statusCode, path).toBe(200);
      expect(await forwarded.body.text()).toBe(answer);
      expect(upstream.requests.at(-1)).toMatchObject({ method: 'POST', path: `/ptf/v1${path}` });
    }
  });

  it('selects the provider by a config too', async () => {
    upstream.script('/ptf/v1/files', [{ status: 200, json: { object: 'list', data: [] } }]);
    const config = JSON.stringify({ provider: 'openai', api_key: 'sk-config', custom_host: base });
    const response = await request(`${env().gatewayUrl}/files`, { headers: { 'x-gateway-api-key': env().adminKey, 'x-gateway-config': config } });
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toEqual({ object: 'list', data: [] });
    expect(upstream.requests.at(-1)).toMatchObject({ method: 'GET', path: '/ptf/v1/files' });
  });
});
