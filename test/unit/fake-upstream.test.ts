import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Agent, Pool, fetch, request } from 'undici';
import { fakeBinaryBytes, fakeEmbedding, startFakeUpstream, SSE_RAW_BODY, SSE_RAW_PARTS } from '../support/fake-upstream';
import type { FakeUpstream } from '../support/fake-upstream';
import { readRecording, readRecordingBytes, recordingsDir, recordingsPresent } from '../support/recordings';
import { collectSse, parseSse, SseParser } from '../support/sse';

const CHUNKS = 5;
let up: FakeUpstream;
let agent: Agent;

beforeAll(async () => {
  up = await startFakeUpstream({ chunkCount: CHUNKS });
  agent = new Agent({ connections: 16 });
});
afterAll(async () => {
  await agent?.close();
  await up?.close();
});
beforeEach(() => up.reset());

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

function post(path: string, body: unknown, init: { signal?: AbortSignal; headers?: Record<string, string> } = {}) {
  return fetch(up.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...init.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: init.signal,
    dispatcher: agent,
  });
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer' } },
      required: ['city'],
    },
  },
};

describe('default chat completions', () => {
  it('answers a non-stream chat.completion echoing model and last user message', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: [{ type: 'text', text: 'hello world' }] },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: hello world', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    });
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(Number.isInteger(body.created)).toBe(true);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(body.usage.completion_tokens_details.reasoning_tokens).toBe(0);
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(up.requests[0].headers.authorization).toBe('Bearer sk-test');
    expect((up.requests[0].json as Json).model).toBe('gpt-4o-mini');
  });

  it('serves under any base path and at root', async () => {
    for (const base of ['', '/v1', '/s/abc/v1', '/openai/v1']) {
      const res = await post(`${base}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'x' }] });
      expect(res.status, base).toBe(200);
      expect(((await res.json()) as Json).choices[0].message.content).toBe('echo: x');
    }
  });

  it('streams chunks: role first, N content chunks, finish_reason, no usage chunk without include_usage, [DONE] last', async () => {
    const res = await post('/v1/chat/completions', { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'stream me please' }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const s = await collectSse(res);
    expect(s.doneLast).toBe(true);
    expect(s.events.every((e) => e.event === undefined)).toBe(true);
    const chunks = s.json as Json[];
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'gpt-4o')).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    const content = chunks.slice(1, -1);
    expect(content).toHaveLength(CHUNKS);
    expect(content.map((c) => c.choices[0].delta.content).join('')).toBe('echo: stream me please');
    expect(content.every((c) => c.choices[0].finish_reason === null && c.choices[0].delta.role === undefined)).toBe(true);
    const last = chunks[chunks.length - 1];
    expect(last.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.some((c) => c.usage)).toBe(false);
  });

  it('adds the usage chunk (choices: []) before [DONE] only with stream_options.include_usage', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    });
    const s = await collectSse(res);
    expect(s.doneLast).toBe(true);
    const chunks = s.json as Json[];
    const usage = chunks[chunks.length - 1];
    expect(usage.choices).toEqual([]);
    expect(usage.usage.total_tokens).toBe(usage.usage.prompt_tokens + usage.usage.completion_tokens);
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('stop');
    expect(chunks.filter((c) => c.usage)).toHaveLength(1);
  });

  it('writes stream events as separate writes (arrive incrementally with a chunk delay)', async () => {
    const slow = await startFakeUpstream({ chunkCount: 3, chunkDelayMs: 30 });
    try {
      const res = await fetch(slow.url + '/v1/chat/completions', {
        method: 'POST',
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'abcdef' }] }),
      });
      const s = await collectSse(res);
      expect(s.events).toHaveLength(6);
      expect(s.events[s.events.length - 1].receivedAt - s.events[0].receivedAt).toBeGreaterThanOrEqual(100);
    } finally {
      await slow.close();
    }
  });

  it('burstStreams writes the same stream in one go', async () => {
    const fast = await startFakeUpstream({ chunkCount: 3, burstStreams: true });
    try {
      const res = await fetch(fast.url + '/v1/chat/completions', {
        method: 'POST',
        body: JSON.stringify({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'abcdef' }] }),
      });
      const s = await collectSse(res);
      expect(s.events).toHaveLength(7);
      expect(s.doneLast).toBe(true);
      expect(
        (s.json as Json[])
          .slice(1, 4)
          .map((c) => c.choices[0].delta.content)
          .join(''),
      ).toBe('echo: abcdef');
    } finally {
      await fast.close();
    }
  });

  it('streams a tool call like OpenAI: id/name first, then argument fragments, finish_reason tool_calls', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Please call a tool for Paris' }],
    });
    const s = await collectSse(res);
    expect(s.doneLast).toBe(true);
    const chunks = s.json as Json[];
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks[0].choices[0].delta.content).toBeNull();
    const deltas = chunks.filter((c) => c.choices.length && c.choices[0].delta.tool_calls).map((c) => c.choices[0].delta.tool_calls[0]);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas[0].id).toMatch(/^call_[A-Za-z0-9]+$/);
    expect(deltas.length).toBeGreaterThan(2);
    for (const d of deltas.slice(1)) {
      expect(d.id).toBeUndefined();
      expect(d.function.name).toBeUndefined();
      expect(d.index).toBe(0);
    }
    const args = JSON.parse(deltas.map((d) => d.function.arguments).join(''));
    expect(args).toEqual({ city: 'example', unit: 'celsius', days: 1 });
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('tool_calls');
    expect(chunks[chunks.length - 1].choices).toEqual([]);
  });

  it('calls the function named by tool_choice (non-stream) with content null', async () => {
    const other = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } };
    const res = await post('/v1/chat/completions', {
      model: 'gpt-4o',
      tools: [weatherTool, other],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      messages: [{ role: 'user', content: 'anything' }],
    });
    const body = (await res.json()) as Json;
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.tool_calls).toHaveLength(1);
    expect(body.choices[0].message.tool_calls[0]).toMatchObject({ type: 'function', function: { name: 'lookup' } });
    expect(JSON.parse(body.choices[0].message.tool_calls[0].function.arguments)).toEqual({ q: 'example' });
  });

  it('streams parallel tool calls with indexes 0..n-1 on "call all tools"', async () => {
    const other = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } };
    const s = await collectSse(
      await post('/v1/chat/completions', { model: 'm', stream: true, tools: [weatherTool, other], messages: [{ role: 'user', content: 'call all tools' }] }),
    );
    const deltas = (s.json as Json[]).flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    const starts = deltas.filter((d: Json) => d.id);
    expect(starts.map((d: Json) => [d.index, d.function.name])).toEqual([
      [0, 'get_weather'],
      [1, 'lookup'],
    ]);
    const argsOf = (i: number) =>
      deltas
        .filter((d: Json) => d.index === i)
        .map((d: Json) => d.function.arguments)
        .join('');
    expect(JSON.parse(argsOf(1))).toEqual({ q: 'example' });
  });

  it('does not call tools without the trigger phrase', async () => {
    const body = (await (await post('/v1/chat/completions', { model: 'm', tools: [weatherTool], messages: [{ role: 'user', content: 'hi' }] })).json()) as Json;
    expect(body.choices[0].message.content).toBe('echo: hi');
    expect(body.choices[0].message.tool_calls).toBeUndefined();
  });

  it('answers model error-429 with an OpenAI error body and retry-after, also for stream requests', async () => {
    for (const stream of [false, true]) {
      const res = await post('/v1/chat/completions', { model: 'error-429', stream, messages: [{ role: 'user', content: 'x' }] });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      const body = (await res.json()) as Json;
      expect(body.error).toMatchObject({ type: expect.any(String), code: 'rate_limit_exceeded', param: null });
      expect(typeof body.error.message).toBe('string');
    }
    const r500 = await post('/v1/embeddings', { model: 'error-500', input: 'x' });
    expect(r500.status).toBe(500);
    expect(((await r500.json()) as Json).error.type).toBe('server_error');
  });

  it('sends an in-stream error event for model error-midstream', async () => {
    const s = await collectSse(await post('/v1/chat/completions', { model: 'error-midstream', stream: true, messages: [{ role: 'user', content: 'x' }] }));
    expect(s.status).toBe(200);
    expect(s.done).toBe(false);
    expect((s.json[s.json.length - 1] as Json).error.type).toBe('server_error');
  });

  it('rejects invalid JSON and missing fields in OpenAI shape', async () => {
    const bad = await post('/v1/chat/completions', '{not json');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error.type).toBe('invalid_request_error');
    const noMessages = await post('/v1/chat/completions', { model: 'm' });
    expect(noMessages.status).toBe(400);
    expect(((await noMessages.json()) as Json).error.param).toBe('messages');
    const unknown = await post('/v1/nothing-here', { model: 'm' });
    expect(unknown.status).toBe(404);
  });
});

describe('default completions, embeddings, models', () => {
  it('answers text_completion and streams chunks with the same object name', async () => {
    const plain = (await (await post('/v1/completions', { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi' })).json()) as Json;
    expect(plain).toMatchObject({
      object: 'text_completion',
      model: 'gpt-3.5-turbo-instruct',
      choices: [{ text: 'echo: Say hi', index: 0, finish_reason: 'stop' }],
    });
    expect(plain.usage.total_tokens).toBe(plain.usage.prompt_tokens + plain.usage.completion_tokens);

    const s = await collectSse(
      await post('/v1/completions', { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi', stream: true, stream_options: { include_usage: true } }),
    );
    expect(s.doneLast).toBe(true);
    const chunks = s.json as Json[];
    expect(chunks.every((c) => c.object === 'text_completion')).toBe(true);
    const withChoices = chunks.filter((c) => c.choices.length);
    expect(withChoices.map((c) => c.choices[0].text).join('')).toBe('echo: Say hi');
    expect(withChoices[withChoices.length - 1].choices[0].finish_reason).toBe('stop');
    expect(chunks[chunks.length - 1]).toMatchObject({ choices: [], usage: { prompt_tokens: expect.any(Number) } });
  });

  it('returns float embeddings of the model dimensions and base64 that decodes to the same float32 values', async () => {
    const f = (await (await post('/v1/embeddings', { model: 'text-embedding-3-large', input: ['a', 'bb'] })).json()) as Json;
    expect(f.object).toBe('list');
    expect(f.model).toBe('text-embedding-3-large');
    expect(f.data).toHaveLength(2);
    expect(f.data.map((d: Json) => d.index)).toEqual([0, 1]);
    expect(f.data[0].embedding).toHaveLength(3072);
    expect(f.usage).toMatchObject({ prompt_tokens: expect.any(Number), total_tokens: expect.any(Number) });

    const b = (await (await post('/v1/embeddings', { model: 'text-embedding-3-large', input: ['a', 'bb'], encoding_format: 'base64' })).json()) as Json;
    expect(typeof b.data[1].embedding).toBe('string');
    const buf = Buffer.from(b.data[1].embedding, 'base64');
    const decoded = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
    expect(decoded).toHaveLength(3072);
    expect(Array.from(decoded)).toEqual(f.data[1].embedding);
    expect(Array.from(decoded)).toEqual(Array.from(fakeEmbedding('bb', 3072)));

    const small = (await (
      await post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'x', dimensions: 256, encoding_format: 'base64' })
    ).json()) as Json;
    expect(Buffer.from(small.data[0].embedding, 'base64').length).toBe(256 * 4);
    const def = (await (await post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'x' })).json()) as Json;
    expect(def.data[0].embedding).toHaveLength(1536);
  });

  it('lists models', async () => {
    const res = await fetch(up.url + '/v1/models', { dispatcher: agent });
    const body = (await res.json()) as Json;
    expect(body.object).toBe('list');
    expect(body.data.length).toBeGreaterThan(0);
    expect(body.data[0]).toMatchObject({ object: 'model', id: expect.any(String) });
  });
});

describe('pass-through helpers', () => {
  it('echo returns method, path, query, headers and base64 body', async () => {
    const payload = Buffer.from([0, 1, 2, 250, 255]);
    const res = await fetch(up.url + '/s/x/v1/files/echo?purpose=batch&a=1&a=2', {
      method: 'PUT',
      headers: { 'x-custom': 'yes', 'content-type': 'application/octet-stream' },
      body: payload,
      dispatcher: agent,
    });
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ method: 'PUT', path: '/s/x/v1/files/echo', query: { purpose: 'batch', a: ['1', '2'] }, bodyLength: 5 });
    expect(body.headers['x-custom']).toBe('yes');
    expect(Buffer.from(body.bodyBase64, 'base64').equals(payload)).toBe(true);
    expect(up.requests[0].body.equals(payload)).toBe(true);
  });

  it('binary returns exactly the deterministic bytes for ?size=', async () => {
    const res = await fetch(up.url + '/v1/binary?size=100000', { dispatcher: agent });
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    const got = Buffer.from(await res.arrayBuffer());
    expect(got.length).toBe(100000);
    expect(got.equals(fakeBinaryBytes(100000))).toBe(true);
    const again = Buffer.from(await (await fetch(up.url + '/binary?size=100000', { dispatcher: agent })).arrayBuffer());
    expect(again.equals(got)).toBe(true);
    expect(new Set(got.subarray(0, 4096)).size).toBeGreaterThan(200);
  });

  it('sse-raw streams the fixed body with pauses between events', async () => {
    const res = await fetch(up.url + '/v1/sse-raw?delayMs=25', { dispatcher: agent });
    const s = await collectSse(res);
    expect(s.text).toBe(SSE_RAW_BODY);
    expect(s.events.map((e) => e.data)).toEqual(['{"n":1}', '{"n":2,\n"multi":true}', '{"n":3}', '[DONE]']);
    expect(s.events[0].event).toBe('message');
    expect(s.events[3].receivedAt - s.events[0].receivedAt).toBeGreaterThanOrEqual(60);
    expect(SSE_RAW_PARTS.length).toBe(5);
  });
});

/** Whether scripted as text or as bytes in small pieces, a stream must come back as the provider's exact bytes. */
async function replaysByteForByte(text: string, bytes: Buffer) {
  up.script('/s/rec', [{ rawSse: text }, { rawSse: bytes, splitEvery: 7 }]);
  for (let i = 0; i < 2; i++) {
    const { statusCode, headers, body } = await request(up.url + '/s/rec/v1/chat/completions', {
      method: 'POST',
      body: '{}',
      dispatcher: agent,
    });
    expect(statusCode).toBe(200);
    expect(headers['content-type']).toMatch(/^text\/event-stream/);
    const got = Buffer.from(await body.arrayBuffer());
    expect(got.equals(bytes)).toBe(true);
  }
  const events = parseSse(bytes.toString('utf8'));
  expect(events[events.length - 1].data).toBe('[DONE]');
  expect(JSON.parse(events[0].data).choices[0].delta.role).toBe('assistant');
}

describe('scripts', () => {
  it('consumes steps in order for the prefix, then the default behaviour resumes', async () => {
    up.script('/s/abc', [
      { status: 503, json: { error: { message: 'busy', type: 'server_error', param: null, code: null } }, headers: { 'retry-after': '2' } },
      { sse: ['{"a":1}', '{"a":2}', '[DONE]'], chunkDelayMs: 5 },
      { status: 200, body: 'plain', delayMs: 20 },
    ]);
    const chat = { model: 'm', messages: [{ role: 'user', content: 'q' }] };
    const r1 = await post('/s/abc/v1/chat/completions', chat);
    expect(r1.status).toBe(503);
    expect(r1.headers.get('retry-after')).toBe('2');
    expect(((await r1.json()) as Json).error.message).toBe('busy');

    // another prefix sharing a textual prefix is not affected
    const other = await post('/s/abcd/v1/chat/completions', chat);
    expect(((await other.json()) as Json).choices[0].message.content).toBe('echo: q');

    const s = await collectSse(await post('/s/abc/v1/chat/completions', chat));
    expect(s.events.map((e) => e.data)).toEqual(['{"a":1}', '{"a":2}', '[DONE]']);
    expect(s.text).toBe('data: {"a":1}\n\ndata: {"a":2}\n\ndata: [DONE]\n\n');

    const t0 = performance.now();
    const r3 = await post('/s/abc/v1/embeddings', {});
    expect(await r3.text()).toBe('plain');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(15);

    const r4 = await post('/s/abc/v1/chat/completions', chat);
    expect(((await r4.json()) as Json).choices[0].message.content).toBe('echo: q');
    expect(up.requests.map((r) => r.path)).toEqual([
      '/s/abc/v1/chat/completions',
      '/s/abcd/v1/chat/completions',
      '/s/abc/v1/chat/completions',
      '/s/abc/v1/embeddings',
      '/s/abc/v1/chat/completions',
    ]);
  });

  it('reset step destroys the connection without a response', async () => {
    up.script('/s/reset', [{ reset: true }]);
    const err = await post('/s/reset/v1/chat/completions', { model: 'm', messages: [] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(up.requests).toHaveLength(1);
  });

  it('hang step says nothing for hangMs (client timeout fires first), then drops the connection', async () => {
    up.script('/s/hang', [{ hangMs: 1000 }, { hangMs: 150 }]);
    const t0 = performance.now();
    const aborted = await post('/s/hang/v1/chat/completions', {}, { signal: AbortSignal.timeout(120) }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(aborted?.name).toBe('TimeoutError');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100);

    const t1 = performance.now();
    const dropped = await post('/s/hang/v1/chat/completions', {}).then(
      () => null,
      (e: unknown) => e,
    );
    expect(dropped).toBeInstanceOf(Error);
    expect(performance.now() - t1).toBeGreaterThanOrEqual(130);
  });

  it('sse failAfter destroys the socket after N events', async () => {
    up.script('/s/fail', [{ sse: ['{"n":1}', '{"n":2}', '{"n":3}', '[DONE]'], failAfter: 2 }]);
    const res = await post('/s/fail/v1/chat/completions', {});
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const parser = new SseParser();
    const dec = new TextDecoder();
    const got: string[] = [];
    let error: unknown = null;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const e of parser.push(dec.decode(value, { stream: true }))) got.push(e.data);
      }
    } catch (e) {
      error = e;
    }
    expect(got).toEqual(['{"n":1}', '{"n":2}']);
    expect(error).toBeInstanceOf(Error);
  });

  it('replays a provider stream byte for byte, whole and split (written inline)', async () => {
    const sent = [
      '{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hé"}}]}',
      '{"id":"c1","choices":[],"usage":{"total_tokens":3}}',
      '[DONE]',
    ]
      .map((data) => `data: ${data}\n\n`)
      .join('');
    await replaysByteForByte(sent, Buffer.from(sent));
  });

  it.skipIf(!recordingsPresent)('replays a provider stream byte for byte, whole and split (recordings)', async () => {
    const name = 'openai_chat_stream_text_with_usage.sse';
    await replaysByteForByte(readRecording(name), readRecordingBytes(name));
  });
});

describe.skipIf(!recordingsPresent)('fake upstream: recorded transcripts', () => {
  it('recordings come from ../shared next to the repository', () => {
    expect(recordingsDir.replace(/\\/g, '/')).toMatch(/\/shared\/fixtures\/providers$/);
    expect(() => readRecording('no_such_fixture.sse')).toThrow(/no_such_fixture/);
  });
});

describe('concurrency', () => {
  it('serves many concurrent keep-alive requests', async () => {
    const pool = new Pool(up.url, { connections: 32, pipelining: 1 });
    try {
      const before = up.requestCount;
      const body = JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'load' }] });
      const results = await Promise.all(
        Array.from({ length: 500 }, async () => {
          const r = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body });
          const j = (await r.body.json()) as Json;
          return [r.statusCode, j.choices[0].message.content];
        }),
      );
      expect(results.every(([s, c]) => s === 200 && c === 'echo: load')).toBe(true);
      expect(up.requestCount - before).toBe(500);
    } finally {
      await pool.close();
    }
  });
});

describe('parseSse', () => {
  it('handles CRLF, CR, comments, multi-line data, event names and optional space', () => {
    const text =
      '\uFEFF: comment\r\nevent: ping\r\ndata: {"a":1}\r\n\r\ndata:no-space\rdata:  two spaces\r\r: keep-alive\n\ndata: x\ndata\ndata: y\n\nid: 7\nretry: 10\ndata: last\n\n';
    expect(parseSse(text)).toEqual([{ event: 'ping', data: '{"a":1}' }, { data: 'no-space\n two spaces' }, { data: 'x\n\ny' }, { id: '7', data: 'last' }]);
  });

  it('ignores events without data and discards an unterminated trailing event', () => {
    expect(parseSse('event: lonely\n\n: only comment\n\ndata: done\n\ndata: partial')).toEqual([{ data: 'done' }]);
    expect(parseSse('data:\n\n')).toEqual([{ data: '' }]);
  });

  it('parses incrementally across arbitrary splits, including inside CRLF', () => {
    const text = 'event: a\r\ndata: 1\r\n\r\ndata: 2\r\ndata: 3\r\n\r\n';
    const whole = parseSse(text);
    for (let cut = 1; cut < text.length; cut++) {
      const p = new SseParser();
      const events = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      expect(events, `cut at ${cut}`).toEqual(whole);
    }
    const p = new SseParser();
    const byChar = text.split('').flatMap((ch) => p.push(ch));
    expect(byChar).toEqual([{ event: 'a', data: '1' }, { data: '2\n3' }]);
  });
});
