/**
 * A fake OpenAI-compatible provider over real HTTP (node:http on loopback).
 *
 * Default behaviour (no script for the path) — endpoints are matched on the end of the path, so any
 * base path works (root, `/v1`, `/s/<id>/v1`, `/openai/deployments/<d>`, …):
 *   POST …/chat/completions   chat.completion / chat.completion.chunk stream (content "echo: <last user text>")
 *   POST …/completions        text_completion (also streamed with object "text_completion")
 *   POST …/embeddings         float or base64 (`encoding_format`) vectors of the model's dimensions
 *   POST …/responses          OpenAI's Responses API (fakes/openai-responses.ts): a response object, or its event
 *                             stream; text "echo: <last user text> (turn N)", N the user messages of the whole
 *                             conversation; responses kept per fake for `previous_response_id`
 *   GET  …/models[/<id>]      model list / model object
 *   ANY  …/echo[/…]           200 JSON {method, path, url, query, headers, bodyBase64, bodyLength}
 *   ANY  …/binary?size=N      N deterministic bytes (see `fakeBinaryBytes`), application/octet-stream
 *   ANY  …/sse-raw[?delayMs=] the fixed SSE body `SSE_RAW_PARTS`, one part at a time with pauses
 *   …/files, …/files/<id>/content, …/batches[/<id>[/cancel]]   OpenAI's Batch API (fakes/openai-batches.ts)
 *   …/messages/batches[/<id>[/cancel|/results]]                 Anthropic's Message Batches (fakes/anthropic-batches.ts)
 *   /mistral-ai/…/fine_tuning/jobs[/<id>[/cancel|/start]]       Mistral's fine-tuning API (fakes/mistral-fine-tuning.ts)
 *   /together-ai/…/files/upload, …/fine-tunes[/<id>[/cancel|/events|/checkpoints]]   Together AI's fine-tuning API (fakes/together-fine-tuning.ts)
 * A model named `error-<status>` (e.g. `error-429`) gets that status with an OpenAI error body
 * (`retry-after` on 429/503). Model `error-midstream` streams two content chunks and then an in-stream
 * `data: {"error":…}` event without `[DONE]` (non-stream: 500); at …/responses, two text deltas, an
 * `error` event and `response.failed`.
 *
 * `script(prefix, steps)` queues steps for requests whose path starts with `prefix` (at a `/` or `?`
 * boundary); each such request consumes one step; once the queue is empty the default behaviour resumes.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fakeMessageBatches } from './fakes/anthropic-batches';
import { fakeMistralFineTuning } from './fakes/mistral-fine-tuning';
import { fakeBatchApi } from './fakes/openai-batches';
import { fakeTogetherFineTuning } from './fakes/together-fine-tuning';
import { fakeResponsesApi } from './fakes/openai-responses';
import { fakeTokenCount, isObj, nextId, type Obj, openAiErrorBody, planToolCalls, splitPieces, textOfContent } from './fakes/openai-shared';

export { fakeTokenCount, openAiErrorBody, splitPieces } from './fakes/openai-shared';

export interface RecordedRequest {
  method: string;
  /** Path including the query string, exactly as received. */
  path: string;
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** The parsed body when it is JSON. */
  json?: unknown;
  /** `Date.now()` when the request headers arrived. */
  receivedAt: number;
}

export type FakeStep =
  | {
      status: number;
      json?: unknown;
      body?: string | Buffer;
      headers?: Record<string, string>;
      delayMs?: number;
    }
  | {
      /** Raw event payload strings, each sent as `data: <x>\n\n` (nothing is appended: include '[DONE]' yourself). */
      sse: string[];
      /** Pause before every event after the first (headers are sent at once). */
      chunkDelayMs?: number;
      headers?: Record<string, string>;
      status?: number;
      /** Destroy the socket after N events have been flushed (the chunked body is never terminated). */
      failAfter?: number;
      /** Wait this long before sending the headers. */
      delayMs?: number;
    }
  | {
      /** Sent as-is (a recorded fixture replays byte for byte). */
      rawSse: string | Buffer;
      /** Write it in pieces of this many bytes, each in its own socket write. */
      splitEvery?: number;
      /** Pause between pieces (default: next macrotask only). */
      chunkDelayMs?: number;
      headers?: Record<string, string>;
      status?: number;
      delayMs?: number;
    }
  | { /** Destroy the connection without a response (TCP RST). */ reset: true }
  | { /** Accept and say nothing for that long, then destroy the connection. */ hangMs: number }
  | {
      /** Escape hatch: answer the request yourself. */
      handle: (req: IncomingMessage, res: ServerResponse, recorded: RecordedRequest) => void | Promise<void>;
    };

export interface FakeUpstream {
  /** 'http://127.0.0.1:PORT' */
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Queue steps for requests whose path starts with `path` (a base path prefix like '/s/abc'). Appends to an existing queue. */
  script(path: string, steps: FakeStep[]): void;
  /** Forget scripts and recorded requests. */
  reset(): void;
  close(): Promise<void>;
  /** Requests served since start (counted even when `record` is false). */
  readonly requestCount: number;
}

export interface FakeUpstreamOptions {
  port?: number;
  host?: string;
  /** Number of content chunks in default streams (default 8). */
  chunkCount?: number;
  /** Pause between events of default streams; 0 (default) = each event in its own macrotask. */
  chunkDelayMs?: number;
  /** Record requests in `requests` (default true; turn off for load tests). */
  record?: boolean;
  /**
   * Write all events of a default stream in the same tick (Node coalesces them into one socket write).
   * Default false: each event is its own write, in its own macrotask. Streams are syscall-bound, so this
   * roughly triples stream throughput for load tests that do not care about event timing.
   */
  burstStreams?: boolean;
}

export const DEFAULT_CHUNK_COUNT = 8;
export const FAKE_SYSTEM_FINGERPRINT = 'fp_fake0000001';

/** The fixed SSE body of `…/sse-raw`, one element per write. */
export const SSE_RAW_PARTS: readonly string[] = Object.freeze([
  ': fake-upstream keep-alive\n\n',
  'event: message\ndata: {"n":1}\n\n',
  'data: {"n":2,\ndata: "multi":true}\n\n',
  'id: 3\ndata: {"n":3}\n\n',
  'data: [DONE]\n\n',
]);
export const SSE_RAW_BODY = SSE_RAW_PARTS.join('');
export const SSE_RAW_DEFAULT_DELAY_MS = 20;

export const FAKE_MODELS: readonly string[] = Object.freeze([
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4.1',
  'o3-mini',
  'gpt-3.5-turbo-instruct',
  'text-embedding-3-small',
  'text-embedding-3-large',
  'text-embedding-ada-002',
]);

// ---------------------------------------------------------------------------------------------
// Deterministic helpers (exported so tests can compute expectations)

let binaryCache: Buffer = Buffer.alloc(0);
/** `size` pseudo-random bytes; always the same bytes for the same size (a prefix of one fixed stream). */
export function fakeBinaryBytes(size: number): Buffer {
  if (size > binaryCache.length) {
    const n = Math.max(size, binaryCache.length * 2, 65536);
    const buf = Buffer.allocUnsafe(n);
    let x = 0x9e3779b9 >>> 0;
    for (let i = 0; i < n; i++) {
      x ^= x << 13;
      x >>>= 0;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      buf[i] = x & 0xff;
    }
    binaryCache = buf;
  }
  return binaryCache.subarray(0, size);
}

/** Embedding dimensions the fake uses for a model when the request has no `dimensions`. */
export function fakeEmbeddingDims(model: string): number {
  if (model.includes('3-large')) return 3072;
  return 1536;
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0 || 1;
}

/** The deterministic float32 vector the fake returns for `input` (values are exact in float32). */
export function fakeEmbedding(input: string, dims: number): Float32Array {
  const out = new Float32Array(dims);
  let x = fnv1a(input);
  for (let i = 0; i < dims; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = ((x % 8193) - 4096) / 32768;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

const EMPTY = Buffer.alloc(0);

function usageJson(prompt: number, completion: number): string {
  return (
    `{"prompt_tokens":${prompt},"completion_tokens":${completion},"total_tokens":${prompt + completion},` +
    `"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
    `"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`
  );
}

function parseQuery(url: string): Record<string, string | string[]> {
  const q = url.indexOf('?');
  const out: Record<string, string | string[]> = {};
  if (q === -1) return out;
  for (const [k, v] of new URLSearchParams(url.slice(q + 1))) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

function looksJson(body: Buffer): boolean {
  for (let i = 0; i < body.length && i < 64; i++) {
    const c = body[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    return c === 0x7b /* { */ || c === 0x5b /* [ */;
  }
  return false;
}

const MODELS_LIST = JSON.stringify({
  object: 'list',
  data: FAKE_MODELS.map((id) => ({ id, object: 'model', created: 1715367049, owned_by: 'system' })),
});

// ---------------------------------------------------------------------------------------------

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const host = options.host ?? '127.0.0.1';
  const chunkCount = Math.max(1, Math.floor(options.chunkCount ?? DEFAULT_CHUNK_COUNT));
  const chunkDelayMs = Math.max(0, options.chunkDelayMs ?? 0);
  const record = options.record ?? true;
  // OpenAI's Batch API (files and batches), stateful per fake: what provider-run batches call.
  const batchApi = fakeBatchApi();
  const messageBatches = fakeMessageBatches();
  const mistralFineTuning = fakeMistralFineTuning(batchApi.files);
  const togetherFineTuning = fakeTogetherFineTuning();
  // The Responses API keeps the responses it made, so `previous_response_id` works per fake.
  const responsesApi = fakeResponsesApi({ deltaCount: chunkCount });
  const burst = options.burstStreams === true && chunkDelayMs === 0;

  const requests: RecordedRequest[] = [];
  const scripts = new Map<string, FakeStep[]>();
  let prefixes: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  let served = 0;
  let reqCounter = 0;

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });
  const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
  const pause = (): Promise<void> => (chunkDelayMs > 0 ? sleep(chunkDelayMs) : tick());

  const requestId = (): string => 'req_fake' + (++reqCounter).toString(16).padStart(28, '0');

  function sendBody(res: ServerResponse, status: number, body: string | Buffer, contentType: string, extra?: Record<string, string>): void {
    const headers: Record<string, string | number> = {
      'content-type': contentType,
      'content-length': typeof body === 'string' ? Buffer.byteLength(body) : body.length,
      'x-request-id': requestId(),
    };
    if (extra) Object.assign(headers, extra);
    res.writeHead(status, headers);
    res.end(body);
  }
  const sendJson = (res: ServerResponse, status: number, body: string, extra?: Record<string, string>): void =>
    sendBody(res, status, body, 'application/json', extra);

  function sendError(res: ServerResponse, status: number, message?: string, param: string | null = null): void {
    const extra: Record<string, string> | undefined = status === 429 || status === 503 ? { 'retry-after': '1' } : undefined;
    if (status === 429) Object.assign(extra!, { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1s' });
    sendJson(res, status, openAiErrorBody(status, message, param), extra);
  }

  /** Writes with back-pressure; resolves when the chunk is accepted (or the response died). */
  function write(res: ServerResponse, chunk: string | Buffer): Promise<void> | void {
    if (res.destroyed) return;
    if (res.write(chunk)) return;
    return new Promise<void>((resolve) => {
      const done = (): void => {
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }

  function startSse(res: ServerResponse, status = 200, extra?: Record<string, string>): void {
    const headers: Record<string, string> = {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': requestId(),
    };
    if (extra) Object.assign(headers, extra);
    res.writeHead(status, headers);
    res.flushHeaders();
  }

  async function streamEvents(res: ServerResponse, events: string[]): Promise<void> {
    startSse(res);
    if (burst) {
      for (const e of events) res.write(e);
      res.end();
      return;
    }
    for (let i = 0; i < events.length; i++) {
      if (i > 0) await pause();
      if (res.destroyed || closed) return;
      await write(res, events[i]);
    }
    if (!res.destroyed) res.end();
  }

  async function destroyAfterFlush(res: ServerResponse): Promise<void> {
    const sock = res.socket;
    if (!sock) return;
    for (let i = 0; i < 200 && !sock.destroyed && (sock.writableLength > 0 || sock.writableCorked > 0); i++) await tick();
    sock.destroy();
  }

  // ------------------------------------------------------------------ default: chat completions
  function handleChat(res: ServerResponse, body: Obj): void | Promise<void> {
    const model = body.model as string;
    const messages = body.messages;
    if (!Array.isArray(messages)) return sendError(res, 400, "Missing required parameter: 'messages'.", 'messages');
    let promptTokens = 3;
    let lastUser = '';
    for (const m of messages) {
      if (!isObj(m)) continue;
      const text = textOfContent(m.content);
      promptTokens += 4 + fakeTokenCount(text);
      if (m.role === 'user') lastUser = text;
    }
    const stream = body.stream === true;
    const includeUsage = stream && isObj(body.stream_options) && body.stream_options.include_usage === true;
    const n = typeof body.n === 'number' && body.n >= 1 && body.n <= 16 ? Math.floor(body.n) : 1;
    const calls = planToolCalls(body, lastUser);
    const content = 'echo: ' + lastUser;
    let completionTokens: number;
    if (calls) {
      completionTokens = 0;
      for (const c of calls) completionTokens += 5 + fakeTokenCount(c.name + c.arguments);
    } else completionTokens = Math.max(1, fakeTokenCount(content));
    completionTokens *= n;

    const id = 'chatcmpl-fake' + nextId();
    const created = Math.floor(Date.now() / 1000);
    const modelJson = JSON.stringify(model);

    if (model === 'error-midstream' && !stream) return sendError(res, 500);

    if (!stream) {
      let message: string;
      let finish: string;
      if (calls) {
        const tc = calls
          .map((c) => `{"id":"${c.id}","type":"function","function":{"name":${JSON.stringify(c.name)},"arguments":${JSON.stringify(c.arguments)}}}`)
          .join(',');
        message = `{"role":"assistant","content":null,"tool_calls":[${tc}],"refusal":null,"annotations":[]}`;
        finish = 'tool_calls';
      } else {
        message = `{"role":"assistant","content":${JSON.stringify(content)},"refusal":null,"annotations":[]}`;
        finish = 'stop';
      }
      let choices = '';
      for (let i = 0; i < n; i++) {
        choices += (i ? ',' : '') + `{"index":${i},"message":${message},"logprobs":null,"finish_reason":"${finish}"}`;
      }
      return sendJson(
        res,
        200,
        `{"id":"${id}","object":"chat.completion","created":${created},"model":${modelJson},"choices":[${choices}],` +
          `"usage":${usageJson(promptTokens, completionTokens)},"service_tier":"default","system_fingerprint":"${FAKE_SYSTEM_FINGERPRINT}"}`,
      );
    }

    const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${modelJson},"service_tier":"default","system_fingerprint":"${FAKE_SYSTEM_FINGERPRINT}","choices":[`;
    const ev = (index: number, delta: string, finish: string | null): string =>
      `${head}{"index":${index},"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}]}\n\n`;
    const events: string[] = [];
    if (model === 'error-midstream') {
      events.push(ev(0, '{"role":"assistant","content":"","refusal":null}', null));
      events.push(ev(0, '{"content":"partial "}', null));
      events.push(ev(0, '{"content":"answer"}', null));
      events.push(`data: ${openAiErrorBody(500)}\n\n`);
      return streamEvents(res, events);
    }
    if (calls) {
      for (let i = 0; i < n; i++) events.push(ev(i, '{"role":"assistant","content":null,"refusal":null}', null));
      calls.forEach((c, ci) => {
        for (let i = 0; i < n; i++) {
          events.push(
            ev(i, `{"tool_calls":[{"index":${ci},"id":"${c.id}","type":"function","function":{"name":${JSON.stringify(c.name)},"arguments":""}}]}`, null),
          );
        }
        for (const frag of splitPieces(c.arguments, chunkCount)) {
          for (let i = 0; i < n; i++) events.push(ev(i, `{"tool_calls":[{"index":${ci},"function":{"arguments":${JSON.stringify(frag)}}}]}`, null));
        }
      });
      for (let i = 0; i < n; i++) events.push(ev(i, '{}', 'tool_calls'));
    } else {
      for (let i = 0; i < n; i++) events.push(ev(i, '{"role":"assistant","content":"","refusal":null}', null));
      for (const piece of splitPieces(content, chunkCount)) {
        const delta = `{"content":${JSON.stringify(piece)}}`;
        for (let i = 0; i < n; i++) events.push(ev(i, delta, null));
      }
      for (let i = 0; i < n; i++) events.push(ev(i, '{}', 'stop'));
    }
    if (includeUsage) events.push(`${head}],"usage":${usageJson(promptTokens, completionTokens)}}\n\n`);
    events.push('data: [DONE]\n\n');
    return streamEvents(res, events);
  }

  // ------------------------------------------------------------------ default: legacy completions
  function handleCompletions(res: ServerResponse, body: Obj): void | Promise<void> {
    const model = body.model as string;
    const p = body.prompt;
    let prompts: string[];
    let promptTokens = 0;
    if (typeof p === 'string') {
      prompts = [p];
      promptTokens = fakeTokenCount(p);
    } else if (Array.isArray(p) && p.length > 0 && p.every((x) => typeof x === 'number')) {
      prompts = [`[${p.length} tokens]`];
      promptTokens = p.length;
    } else if (Array.isArray(p) && p.length > 0) {
      prompts = [];
      for (const x of p) {
        if (typeof x === 'string') {
          prompts.push(x);
          promptTokens += fakeTokenCount(x);
        } else if (Array.isArray(x)) {
          prompts.push(`[${x.length} tokens]`);
          promptTokens += x.length;
        } else return sendError(res, 400, "Invalid value for 'prompt'.", 'prompt');
      }
    } else if (p === undefined) {
      return sendError(res, 400, "Missing required parameter: 'prompt'.", 'prompt');
    } else return sendError(res, 400, "Invalid value for 'prompt'.", 'prompt');
    const texts = prompts.map((x) => 'echo: ' + x);
    let completionTokens = 0;
    for (const t of texts) completionTokens += Math.max(1, fakeTokenCount(t));
    const id = 'cmpl-fake' + nextId();
    const created = Math.floor(Date.now() / 1000);
    const modelJson = JSON.stringify(model);
    const stream = body.stream === true;
    if (!stream) {
      const choices = texts.map((t, i) => `{"text":${JSON.stringify(t)},"index":${i},"logprobs":null,"finish_reason":"stop"}`).join(',');
      return sendJson(
        res,
        200,
        `{"id":"${id}","object":"text_completion","created":${created},"model":${modelJson},"choices":[${choices}],` +
          `"usage":{"prompt_tokens":${promptTokens},"completion_tokens":${completionTokens},"total_tokens":${promptTokens + completionTokens}},"system_fingerprint":"${FAKE_SYSTEM_FINGERPRINT}"}`,
      );
    }
    const includeUsage = isObj(body.stream_options) && body.stream_options.include_usage === true;
    const head = `data: {"id":"${id}","object":"text_completion","created":${created},"choices":[`;
    const tail = `],"model":${modelJson},"system_fingerprint":"${FAKE_SYSTEM_FINGERPRINT}"}\n\n`;
    const events: string[] = [];
    texts.forEach((t, i) => {
      for (const piece of splitPieces(t, chunkCount)) {
        events.push(`${head}{"text":${JSON.stringify(piece)},"index":${i},"logprobs":null,"finish_reason":null}${tail}`);
      }
      events.push(`${head}{"text":"","index":${i},"logprobs":null,"finish_reason":"stop"}${tail}`);
    });
    if (includeUsage) {
      events.push(
        `${head}],"model":${modelJson},"system_fingerprint":"${FAKE_SYSTEM_FINGERPRINT}","usage":{"prompt_tokens":${promptTokens},"completion_tokens":${completionTokens},"total_tokens":${promptTokens + completionTokens}}}\n\n`,
      );
    }
    events.push('data: [DONE]\n\n');
    return streamEvents(res, events);
  }

  // ------------------------------------------------------------------ default: Responses API
  function handleResponses(res: ServerResponse, body: Obj): void | Promise<void> {
    const answer = responsesApi.answer(body);
    if ('events' in answer) return streamEvents(res, answer.events);
    return sendJson(res, answer.status, answer.json);
  }

  // ------------------------------------------------------------------ default: embeddings
  const embeddingCache = new Map<string, string>();
  function embeddingJson(input: string, dims: number, base64: boolean): string {
    const key = `${dims}|${base64 ? 'b' : 'f'}|${input}`;
    let s = embeddingCache.get(key);
    if (s === undefined) {
      const v = fakeEmbedding(input, dims);
      s = base64 ? `"${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}"` : `[${Array.prototype.join.call(v, ',')}]`;
      if (embeddingCache.size >= 2048) embeddingCache.clear();
      embeddingCache.set(key, s);
    }
    return s;
  }

  function handleEmbeddings(res: ServerResponse, body: Obj): void {
    const model = body.model as string;
    const input = body.input;
    let inputs: string[];
    let promptTokens = 0;
    if (typeof input === 'string') {
      inputs = [input];
      promptTokens = Math.max(1, fakeTokenCount(input));
    } else if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number')) {
      inputs = [JSON.stringify(input)];
      promptTokens = input.length;
    } else if (Array.isArray(input) && input.length > 0) {
      inputs = [];
      for (const x of input) {
        if (typeof x === 'string') {
          inputs.push(x);
          promptTokens += Math.max(1, fakeTokenCount(x));
        } else if (Array.isArray(x)) {
          inputs.push(JSON.stringify(x));
          promptTokens += x.length;
        } else return sendError(res, 400, "'$.input' is invalid.", 'input');
      }
    } else return sendError(res, 400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'input');
    const enc = body.encoding_format;
    if (enc !== undefined && enc !== 'float' && enc !== 'base64') {
      return sendError(res, 400, "Invalid value for 'encoding_format': expected 'float' or 'base64'.", 'encoding_format');
    }
    const dimsReq = body.dimensions;
    if (dimsReq !== undefined && (typeof dimsReq !== 'number' || !Number.isInteger(dimsReq) || dimsReq < 1 || dimsReq > 8192)) {
      return sendError(res, 400, "Invalid value for 'dimensions'.", 'dimensions');
    }
    const dims = (dimsReq as number | undefined) ?? fakeEmbeddingDims(model);
    const b64 = enc === 'base64';
    let data = '';
    for (let i = 0; i < inputs.length; i++) {
      data += (i ? ',' : '') + `{"object":"embedding","index":${i},"embedding":${embeddingJson(inputs[i], dims, b64)}}`;
    }
    sendJson(
      res,
      200,
      `{"object":"list","data":[${data}],"model":${JSON.stringify(model)},"usage":{"prompt_tokens":${promptTokens},"total_tokens":${promptTokens}}}`,
    );
  }

  // ------------------------------------------------------------------ helpers
  /** Like `req.headers`, but a header named `__proto__` or `constructor` is kept as an ordinary entry. */
  function headersAsSent(req: IncomingMessage): Record<string, string> {
    const headers: Record<string, string> = Object.create(null);
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!.toLowerCase();
      headers[name] = Object.hasOwn(headers, name) ? `${headers[name]}, ${req.rawHeaders[i + 1]}` : req.rawHeaders[i + 1]!;
    }
    return headers;
  }

  function handleEcho(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, pathname: string): void {
    sendJson(
      res,
      200,
      JSON.stringify({
        method: rec.method,
        path: pathname,
        url: rec.path,
        query: parseQuery(rec.path),
        headers: headersAsSent(req),
        bodyBase64: rec.body.toString('base64'),
        bodyLength: rec.body.length,
      }),
    );
  }

  async function handleSseRaw(res: ServerResponse, url: string): Promise<void> {
    const q = parseQuery(url);
    const d = Number(typeof q.delayMs === 'string' ? q.delayMs : SSE_RAW_DEFAULT_DELAY_MS);
    const delay = Number.isFinite(d) && d >= 0 ? d : SSE_RAW_DEFAULT_DELAY_MS;
    startSse(res);
    for (let i = 0; i < SSE_RAW_PARTS.length; i++) {
      if (i > 0) await (delay > 0 ? sleep(delay) : tick());
      if (res.destroyed || closed) return;
      await write(res, SSE_RAW_PARTS[i]);
    }
    if (!res.destroyed) res.end();
  }

  // ------------------------------------------------------------------ scripts
  function takeStep(url: string): FakeStep | undefined {
    for (const prefix of prefixes) {
      if (!url.startsWith(prefix)) continue;
      const next = url.charCodeAt(prefix.length);
      if (!((prefix.endsWith('/') || Number.isNaN(next) || next === 0x2f /* / */ || next === 0x3f) /* ? */)) continue;
      const queue = scripts.get(prefix)!;
      const step = queue.shift();
      if (queue.length === 0) {
        scripts.delete(prefix);
        prefixes = prefixes.filter((p) => p !== prefix);
      }
      return step;
    }
    return undefined;
  }

  async function runStep(step: FakeStep, req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): Promise<void> {
    const sock: Socket = req.socket;
    if ('reset' in step) {
      if (typeof sock.resetAndDestroy === 'function') sock.resetAndDestroy();
      else sock.destroy();
      return;
    }
    if ('hangMs' in step) {
      await sleep(step.hangMs);
      if (!sock.destroyed) sock.destroy();
      return;
    }
    if ('handle' in step) return step.handle(req, res, rec);
    if (step.delayMs) {
      await sleep(step.delayMs);
      if (res.destroyed || closed) return;
    }
    if ('sse' in step) {
      startSse(res, step.status ?? 200, step.headers);
      const failAfter = step.failAfter;
      const n = failAfter === undefined ? step.sse.length : Math.min(failAfter, step.sse.length);
      for (let i = 0; i < n; i++) {
        if (i > 0 && step.chunkDelayMs) await sleep(step.chunkDelayMs);
        else if (i > 0) await tick();
        if (res.destroyed || closed) return;
        await write(res, `data: ${step.sse[i]}\n\n`);
      }
      if (failAfter !== undefined) return destroyAfterFlush(res);
      if (!res.destroyed) res.end();
      return;
    }
    if ('rawSse' in step) {
      const buf = typeof step.rawSse === 'string' ? Buffer.from(step.rawSse, 'utf8') : step.rawSse;
      startSse(res, step.status ?? 200, step.headers);
      const size = step.splitEvery && step.splitEvery > 0 ? Math.floor(step.splitEvery) : buf.length || 1;
      for (let off = 0; off < buf.length; off += size) {
        if (off > 0) await (step.chunkDelayMs ? sleep(step.chunkDelayMs) : tick());
        if (res.destroyed || closed) return;
        await write(res, buf.subarray(off, off + size));
      }
      if (!res.destroyed) res.end();
      return;
    }
    // plain response
    const headers: Record<string, string> = { ...step.headers };
    const hasType = Object.keys(headers).some((k) => k.toLowerCase() === 'content-type');
    let body: string | Buffer = EMPTY;
    let type = 'text/plain; charset=utf-8';
    if (step.json !== undefined) {
      body = JSON.stringify(step.json);
      type = 'application/json';
    } else if (step.body !== undefined) {
      body = step.body;
      if (typeof body !== 'string') type = 'application/octet-stream';
    }
    const out: Record<string, string | number> = { 'x-request-id': requestId() };
    if (!hasType && (step.json !== undefined || step.body !== undefined)) out['content-type'] = type;
    Object.assign(out, headers);
    if (!Object.keys(out).some((k) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding')) {
      out['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
    }
    res.writeHead(step.status, out);
    res.end(body);
  }

  // ------------------------------------------------------------------ dispatch
  function dispatch(req: IncomingMessage, res: ServerResponse, body: Buffer, receivedAt: number): void | Promise<void> {
    served++;
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);

    let json: unknown;
    let jsonOk = false;
    if (body.length > 0 && looksJson(body)) {
      try {
        json = JSON.parse(body.toString('utf8'));
        jsonOk = true;
      } catch {
        /* not JSON */
      }
    }
    const rec: RecordedRequest = {
      method,
      path: url,
      headers: req.headers as Record<string, string | string[]>,
      body,
      receivedAt,
    };
    if (jsonOk) rec.json = json;
    if (record) requests.push(rec);

    if (scripts.size > 0) {
      const step = takeStep(url);
      if (step) return runStep(step, req, res, rec);
    }

    const api = pathname.endsWith('/chat/completions')
      ? 1
      : pathname.endsWith('/completions')
        ? 2
        : pathname.endsWith('/embeddings')
          ? 3
          : pathname.endsWith('/responses')
            ? 4
            : 0;
    if (api !== 0) {
      if (method !== 'POST') return sendError(res, 404, `Invalid URL (${method} ${pathname})`);
      if (!jsonOk || !isObj(json)) {
        return sendError(
          res,
          400,
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
        );
      }
      const model = json.model;
      if (typeof model !== 'string' || model === '') return sendError(res, 400, 'you must provide a model parameter', null);
      if (model.startsWith('error-') && model !== 'error-midstream') {
        const status = Number(model.slice(6));
        if (Number.isInteger(status) && status >= 400 && status <= 599) return sendError(res, status);
      }
      if (api === 1) return handleChat(res, json);
      if (api === 2) return handleCompletions(res, json);
      if (api === 4) return handleResponses(res, json);
      return handleEmbeddings(res, json);
    }

    const lastSlash = pathname.lastIndexOf('/');
    const last = pathname.slice(lastSlash + 1);
    if (last === 'models' && method === 'GET') return sendJson(res, 200, MODELS_LIST);
    const mi = pathname.indexOf('/models/');
    if (mi !== -1 && method === 'GET' && !pathname.includes('/echo')) {
      const id = decodeURIComponent(pathname.slice(mi + 8));
      if (id) return sendJson(res, 200, `{"id":${JSON.stringify(id)},"object":"model","created":1715367049,"owned_by":"system"}`);
    }
    if (last === 'echo' || pathname.includes('/echo/')) return handleEcho(req, res, rec, pathname);
    if (last === 'binary') {
      const s = Number(parseQuery(url).size ?? 1024);
      if (!Number.isInteger(s) || s < 0 || s > 256 * 1024 * 1024) return sendError(res, 400, 'Invalid size.', 'size');
      return sendBody(res, 200, fakeBinaryBytes(s), 'application/octet-stream');
    }
    if (last === 'sse-raw') return handleSseRaw(res, url);
    if (pathname.startsWith('/mistral-ai/') && mistralFineTuning.handle(req, res, body, pathname)) return;
    if (pathname.startsWith('/together-ai/') && togetherFineTuning.handle(req, res, body, pathname)) return;
    if (messageBatches.handle(req, res, body, pathname) || batchApi.handle(req, res, body, pathname)) return;
    return sendError(res, 404, `Invalid URL (${method} ${pathname})`);
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const receivedAt = Date.now();
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
    });
    req.on('error', () => {});
    req.on('end', () => {
      const body = chunks.length === 0 ? EMPTY : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      let r: void | Promise<void>;
      try {
        r = dispatch(req, res, body, receivedAt);
      } catch (err) {
        fail(res, err);
        return;
      }
      if (r) r.catch((err: unknown) => fail(res, err));
    });
  }

  function fail(res: ServerResponse, err: unknown): void {
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    sendError(res, 500, `fake upstream crashed: ${err instanceof Error ? err.message : String(err)}`);
  }

  const server = createServer({ keepAlive: true, noDelay: true, requestTimeout: 0, headersTimeout: 60_000 }, onRequest);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 0, host, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${urlHost}:${port}`,
    port,
    requests,
    get requestCount() {
      return served;
    },
    script(path: string, steps: FakeStep[]): void {
      if (steps.length === 0) return;
      const queue = scripts.get(path);
      if (queue) queue.push(...steps);
      else {
        scripts.set(path, [...steps]);
        prefixes = [...prefixes, path].sort((a, b) => b.length - a.length);
      }
    },
    reset(): void {
      scripts.clear();
      prefixes = [];
      requests.length = 0;
    },
    close(): Promise<void> {
      if (closed) return Promise.resolve();
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

let ownPathCounter = 0;

/**
 * A base path of its own on a fake upstream (`custom_host` points at it): a test counts exactly the
 * provider calls it caused, and reads what they carried.
 */
export function ownPath(upstream: FakeUpstream, area: string, label: string) {
  const prefix = `/${area}/${label}-${++ownPathCounter}-${Date.now()}`;
  const requests = () => upstream.requests.filter((request) => request.path.startsWith(prefix));
  return { prefix, custom_host: `${upstream.url}${prefix}/v1`, calls: () => requests().length, sent: () => requests().map((request) => request.json as any) };
}
