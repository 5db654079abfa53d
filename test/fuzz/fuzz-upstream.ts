/**
 * One loopback HTTP server that stands in for every provider during the fuzz run, and misbehaves on
 * request.
 *
 * Every provider's base URL points at `<url>/p/<provider>/<the provider's own base path>` (see
 * `baseUrls`), so the fake knows which wire format to answer in: OpenAI's (the OpenAI-compatible
 * table, azure-openai, azure-ai), Anthropic's Messages, Gemini's generateContent, Vertex AI (Gemini
 * and Claude publishers, embeddings by `:predict`, and the service account token exchange at
 * `tokenUri`), Bedrock Converse (JSON and the binary event stream) and Cohere v2. Unknown base paths
 * (a custom host) get OpenAI's format. Every answer carries `x-fuzz-upstream: 1`, so a test can tell
 * a provider's bytes relayed by pass-through from an answer the gateway wrote itself.
 *
 * A request asks for a fault with one of (first match wins):
 *   - the header `x-fuzz-fault: <fault>` (pass-through forwards it; unified routes forward it when
 *     the request names it in `x-gateway-forward-headers`),
 *   - a path segment `fault/<fault>` or the text `fuzz-fault-<fault>` anywhere in the URL (custom
 *     hosts, pass-through paths, Gemini/Bedrock model ids),
 *   - a JSON body whose `model` is `fuzz-fault-<fault>`.
 * See `faults` for what each one does.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { providerNames } from '../../lib/providers/registry';
import { openAICompatibleProviders } from '../../lib/providers/openai-compatible/providers';
import { encodeFrame, pixelPng, type FakeStreamFrame } from '../support/fakes/bedrock';

/** What a provider can be told to do wrong. `status-<code>` answers that status in the provider's error format. */
export const faults = {
  /** Accepts the request and never answers (until the gateway gives up on it). */
  'stall-before': 'no status line at all',
  /** 200 and the headers (SSE for a stream request), then silence. */
  'stall-headers': 'headers, then silence',
  /** 500 with a content-length of 400, 40 bytes of an error body, then silence. */
  'stall-error': 'an error body that stops halfway and stays open',
  /** 200 with a content-length larger than the body sent, then the connection is destroyed. */
  'cut-body': 'a success body cut off',
  /** 500 with a content-length larger than the body sent, then the connection is destroyed. */
  'cut-error': 'an error body cut off',
  /** The connection is destroyed without an answer. */
  reset: 'connection reset before the status line',
  /** A 200 JSON answer even to a stream request. */
  'non-sse': 'a JSON 200 answer to a stream request',
  /** 302 to a loopback port nobody listens on. */
  redirect: 'a redirect',
  /** 200 whose body is not JSON (or SSE events whose data is not JSON). */
  'invalid-json': 'a body that is not JSON',
  /** A 200 answer with a NUL byte in a header value (written on the raw socket). */
  'nul-header': 'a NUL byte in a response header',
  /** 200 text/event-stream with junk lines, no final event and no [DONE]. */
  'garbage-sse': 'SSE junk',
  /** 200 with an empty body. */
  'empty-200': 'an empty 200',
  /** A status line that is not HTTP. */
  'bad-status-line': 'an unparseable status line',
  /** A chunked body with a chunk size that is not hex. */
  'bad-chunk': 'broken chunked framing',
  /** The normal answer, dripped a few bytes at a time (finishes well within a second). */
  slow: 'a slow but complete answer',
  /** 500 with a 1.5 MB error body. */
  'huge-error': 'an error body above the gateway’s held-error limit',
} as const;

export type NamedFault = keyof typeof faults;
export type Fault = NamedFault | `status-${number}`;

export const faultStatuses = [400, 401, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504, 529] as const;
export const allFaults: readonly Fault[] = [...(Object.keys(faults) as NamedFault[]), ...faultStatuses.map((status) => `status-${status}` as const)];

export const faultHeader = 'x-fuzz-fault';

/**
 * The secret the fuzz fixtures store (in saved configs and a saved guardrail), and the only path
 * prefix of the fake it may ever reach: anything else that receives it shows a stored secret sent
 * to a host a request or an edit chose.
 */
export const storedSecret = 'sk-fuzz-stored-secret-d8c1';
export const storedSecretHome = '/home/';

/** Faults after which the gateway may answer 502 (the provider was unreachable or unreadable). */
export function isBrokenFault(fault: Fault): boolean {
  return !fault.startsWith('status-') && fault !== 'slow';
}

/** Faults that leave the gateway waiting: a request carrying one needs a small request timeout. */
export function isStallFault(fault: Fault): boolean {
  return fault === 'stall-before' || fault === 'stall-headers' || fault === 'stall-error';
}

export function faultStatus(fault: Fault): number | undefined {
  return fault.startsWith('status-') ? Number(fault.slice(7)) : undefined;
}

/** The base path of each provider on the fake (what the gateway's GATEWAY_PROVIDER_BASE_URLS names). */
function basePathOf(provider: string): string {
  if (openAICompatibleProviders.some((row) => row.name === provider)) return `/p/${provider}/v1`;
  switch (provider) {
    case 'anthropic':
      return '/p/anthropic/v1';
    case 'google':
      return '/p/google/v1beta';
    case 'vertex-ai':
      return '/p/vertex-ai/v1/projects/fuzz-project/locations/us-central1';
    case 'bedrock':
      return '/p/bedrock';
    case 'azure-openai':
      return '/p/azure-openai/openai';
    case 'azure-ai':
      return '/p/azure-ai/models';
    case 'cohere':
      return '/p/cohere/v2';
    default:
      return `/p/${provider}/v1`;
  }
}

export interface FuzzUpstream {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Provider name → base URL on this fake, for every provider the gateway knows. */
  baseUrls: Record<string, string>;
  /** The OAuth token endpoint for Vertex AI service accounts. */
  tokenUri: string;
  /** A loopback URL on which nothing listens (connections are refused). */
  refusedUrl: string;
  /**
   * Requests answered, and how many of them asked for a fault (by fault); `leaks` lists the paths
   * of requests that carried the fixtures' stored secret anywhere but under `storedSecretHome`.
   */
  stats: { requests: number; byFormat: Record<string, number>; faults: Record<string, number>; leaks: string[] };
  close(): Promise<void>;
}

type Obj = Record<string, any>;
const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);
const marker = { 'x-fuzz-upstream': '1' };
/** The longest a fake connection stays open on its own (a stall the gateway never ends). */
const maxStallMs = 60_000;

export async function startFuzzUpstream(options: { refusedPort: number }): Promise<FuzzUpstream> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const stats: FuzzUpstream['stats'] = { requests: 0, byFormat: {}, faults: {}, leaks: [] };
  let url = '';

  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

  const server = createServer({ keepAlive: true, requestTimeout: 0, headersTimeout: 30_000, maxHeaderSize: 64 * 1024 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => undefined);
    req.on('end', () => {
      answer(req, res, Buffer.concat(chunks)).catch(() => res.destroy());
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  async function answer(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    stats.requests++;
    const rawUrl = req.url ?? '/';
    const pathname = rawUrl.split('?')[0];
    if (!pathname.startsWith(storedSecretHome) && (JSON.stringify(req.headers).includes(storedSecret) || body.includes(storedSecret)))
      stats.leaks.push(`${req.method} ${rawUrl.slice(0, 200)}`);
    let json: unknown;
    try {
      json = body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
    } catch {
      json = undefined;
    }
    const format = formatOf(pathname);
    stats.byFormat[format] = (stats.byFormat[format] ?? 0) + 1;
    const call: Call = {
      req,
      res,
      pathname,
      query: rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?') + 1) : '',
      json: isObj(json) ? json : undefined,
      format,
      stream: wantsStream(format, pathname, json),
    };

    const fault = faultOf(req, rawUrl, call.json);
    if (fault) {
      stats.faults[fault] = (stats.faults[fault] ?? 0) + 1;
      return misbehave(call, fault);
    }
    if (pathname.endsWith('/token') && req.method === 'POST')
      return sendJson(res, 200, { access_token: 'ya29.fuzz-token', expires_in: 3599, token_type: 'Bearer' });
    if (pathname.endsWith('/assets/pixel.png')) {
      res.writeHead(200, { ...marker, 'content-type': 'image/png', 'content-length': pixelPng.length });
      return void res.end(pixelPng);
    }
    return normalAnswer(call);
  }

  interface Call {
    req: IncomingMessage;
    res: ServerResponse;
    pathname: string;
    query: string;
    json: Obj | undefined;
    format: string;
    stream: boolean;
  }

  // ------------------------------------------------------------------------------------------
  // Faults

  async function misbehave(call: Call, fault: Fault): Promise<void> {
    const { res, req } = call;
    const socket = req.socket;
    const status = faultStatus(fault);
    if (status !== undefined) return sendProviderError(call, status);
    switch (fault as NamedFault) {
      case 'stall-before':
        return stall(socket);
      case 'stall-headers':
        res.writeHead(200, { ...marker, 'content-type': call.stream ? contentTypeOfStream(call.format) : 'application/json' });
        res.flushHeaders();
        return stall(socket);
      case 'stall-error':
        res.writeHead(500, { ...marker, 'content-type': 'application/json', 'content-length': 400 });
        res.write('{"error":{"message":"the provider is ');
        return stall(socket);
      case 'cut-body':
      case 'cut-error': {
        const text = JSON.stringify(successBody(call)) + ' '.repeat(200);
        res.writeHead(fault === 'cut-body' ? 200 : 500, { ...marker, 'content-type': 'application/json', 'content-length': text.length + 500 });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        await tick();
        return void socket.destroy();
      }
      case 'reset':
        return void socket.destroy();
      case 'non-sse':
        return sendJson(res, 200, successBody(call));
      case 'redirect':
        res.writeHead(302, { ...marker, location: `http://127.0.0.1:${options.refusedPort}/elsewhere`, 'content-length': 0 });
        return void res.end();
      case 'invalid-json':
        if (call.stream) {
          res.writeHead(200, { ...marker, 'content-type': 'text/event-stream' });
          return void res.end('data: {"id":"chatcmpl-broken","choices":[{"delta":{"content":"x"\n\ndata: {not json}\n\n');
        }
        res.writeHead(200, { ...marker, 'content-type': 'application/json' });
        return void res.end('{"id":"broken","choices":[{"message":');
      case 'nul-header': {
        const text = JSON.stringify(successBody(call));
        socket.write(
          `HTTP/1.1 200 OK\r\nx-fuzz-upstream: 1\r\ncontent-type: application/json\r\nx-fuzz-nul: a\0b\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
        );
        return void socket.end();
      }
      case 'garbage-sse':
        res.writeHead(200, { ...marker, 'content-type': 'text/event-stream' });
        res.write(': hello\n\nevent: ???\ndata: \u0000\u0001\n\n');
        await tick();
        res.write('data: {"choices":[{"delta":{"content":12}}]}\n\nretry: nope\nid: \n\ndata');
        return void res.end();
      case 'empty-200':
        res.writeHead(200, { ...marker, 'content-type': call.stream ? contentTypeOfStream(call.format) : 'application/json', 'content-length': 0 });
        return void res.end();
      case 'bad-status-line':
        socket.write('HTTP/1.1 two hundred OK\r\ncontent-length: 2\r\n\r\n{}');
        return void socket.end();
      case 'bad-chunk':
        socket.write('HTTP/1.1 200 OK\r\nx-fuzz-upstream: 1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n');
        return void socket.end();
      case 'huge-error': {
        const text = JSON.stringify({ error: { message: 'x'.repeat(1_500_000), type: 'server_error', param: null, code: null } });
        res.writeHead(500, { ...marker, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        return void res.end(text);
      }
      case 'slow':
        return normalAnswer(call, true);
    }
  }

  function stall(socket: Socket): void {
    later(maxStallMs, () => socket.destroy());
  }

  // ------------------------------------------------------------------------------------------
  // Normal answers, in each provider's format

  async function normalAnswer(call: Call, drip = false): Promise<void> {
    const { res, pathname, req } = call;
    const send = drip ? dripJson : sendJson;
    const last = pathname.slice(pathname.lastIndexOf('/') + 1);
    if (req.method === 'GET' && last === 'models')
      return send(res, 200, { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1715367049, owned_by: 'system' }] });
    if (last === 'echo' || pathname.includes('/echo/'))
      return send(res, 200, { method: req.method, path: req.url, length: call.json ? JSON.stringify(call.json).length : 0 });
    const operation = operationOf(call);
    if (!operation) return sendProviderError(call, 404, `No route ${req.method} ${pathname} on the fake ${call.format} API.`);
    if (req.method !== 'POST') return sendProviderError(call, 405, `Use POST for ${pathname}.`);
    if (!call.json) return sendProviderError(call, 400, 'The body is not a JSON object.');
    if (call.stream && operation !== 'embeddings') return sendStream(call, drip);
    return send(res, 200, successBody(call));
  }

  type Operation = 'chat' | 'completions' | 'embeddings' | 'responses';

  function operationOf(call: Call): Operation | undefined {
    const { pathname, format } = call;
    switch (format) {
      case 'anthropic':
        return pathname.endsWith('/messages') ? 'chat' : undefined;
      case 'google':
      case 'vertex-ai':
        if (/:(generateContent|streamGenerateContent|rawPredict|streamRawPredict)$/.test(pathname)) return 'chat';
        if (/:(batchEmbedContents|embedContent|predict)$/.test(pathname)) return 'embeddings';
        return undefined;
      case 'bedrock':
        if (/\/(converse|converse-stream)$/.test(pathname)) return 'chat';
        if (pathname.endsWith('/invoke')) return 'embeddings';
        return undefined;
      case 'cohere':
        if (pathname.endsWith('/chat')) return 'chat';
        if (pathname.endsWith('/embed')) return 'embeddings';
        return undefined;
      default:
        if (pathname.endsWith('/chat/completions')) return 'chat';
        if (pathname.endsWith('/completions')) return 'completions';
        if (pathname.endsWith('/embeddings')) return 'embeddings';
        if (pathname.endsWith('/responses')) return 'responses';
        return undefined;
    }
  }

  function successBody(call: Call): Obj {
    const operation = operationOf(call) ?? 'chat';
    const model = typeof call.json?.model === 'string' ? call.json.model : 'fuzz-model';
    const vector = [0.125, -0.25, 0.5];
    switch (call.format) {
      case 'anthropic':
        return anthropicMessage(model);
      case 'google':
      case 'vertex-ai':
        if (/:(rawPredict|streamRawPredict)$/.test(call.pathname)) return anthropicMessage(model);
        if (call.pathname.endsWith(':predict'))
          return {
            predictions: listOf(call.json?.instances).map(() => ({ embeddings: { values: vector, statistics: { token_count: 2, truncated: false } } })),
          };
        if (call.pathname.endsWith(':batchEmbedContents')) return { embeddings: listOf(call.json?.requests).map(() => ({ values: vector })) };
        if (call.pathname.endsWith(':embedContent')) return { embedding: { values: vector } };
        return {
          candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 1, totalTokenCount: 3 },
          modelVersion: model,
        };
      case 'bedrock':
        if (operation === 'embeddings')
          return typeof call.json?.inputText === 'string'
            ? { embedding: vector, inputTextTokenCount: 2 }
            : { embeddings: listOf(call.json?.texts).map(() => vector), id: 'fuzz-embed', response_type: 'embeddings_floats' };
        return {
          output: { message: { role: 'assistant', content: [{ text: 'ok' }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 2, outputTokens: 1, totalTokens: 3 },
          metrics: { latencyMs: 1 },
        };
      case 'cohere':
        if (operation === 'embeddings')
          return {
            id: 'fuzz-embed',
            embeddings: { float: listOf(call.json?.texts).map(() => vector) },
            texts: listOf(call.json?.texts),
            meta: { billed_units: { input_tokens: 2 } },
          };
        return {
          id: 'fuzz-chat',
          finish_reason: 'COMPLETE',
          message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
          usage: { billed_units: { input_tokens: 2, output_tokens: 1 }, tokens: { input_tokens: 2, output_tokens: 1 } },
        };
      default:
        if (operation === 'embeddings') {
          const inputs = Array.isArray(call.json?.input) ? call.json.input : [call.json?.input];
          return {
            object: 'list',
            data: inputs.slice(0, 4096).map((_: unknown, index: number) => ({ object: 'embedding', index, embedding: vector })),
            model,
            usage: { prompt_tokens: 2, total_tokens: 2 },
          };
        }
        if (operation === 'completions')
          return {
            id: 'cmpl-fuzz',
            object: 'text_completion',
            created: 1715367049,
            model,
            choices: [{ index: 0, text: 'ok', finish_reason: 'stop', logprobs: null }],
            usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
          };
        if (operation === 'responses')
          return {
            id: 'resp_fuzz',
            object: 'response',
            created_at: 1715367049,
            model,
            status: 'completed',
            output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }],
          };
        return {
          id: 'chatcmpl-fuzz',
          object: 'chat.completion',
          created: 1715367049,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
        };
    }
  }

  async function sendStream(call: Call, drip: boolean): Promise<void> {
    const { res } = call;
    const model = typeof call.json?.model === 'string' ? call.json.model : 'fuzz-model';
    if (call.format === 'bedrock') {
      const frames: FakeStreamFrame[] = [
        { event: 'messageStart', payload: { role: 'assistant' } },
        { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'ok' } } },
        { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
        { event: 'messageStop', payload: { stopReason: 'end_turn' } },
        { event: 'metadata', payload: { usage: { inputTokens: 2, outputTokens: 1, totalTokens: 3 }, metrics: { latencyMs: 1 } } },
      ];
      res.writeHead(200, { ...marker, 'content-type': 'application/vnd.amazon.eventstream' });
      for (const frame of frames) {
        res.write(encodeFrame(frame));
        if (drip) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      return void res.end();
    }
    let events: string[];
    if (call.format === 'anthropic' || /:streamRawPredict$/.test(call.pathname)) {
      const message = anthropicMessage(model);
      const event = (name: string, data: Obj) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
      events = [
        event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 2, output_tokens: 0 } } }),
        event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } }),
        event('content_block_stop', { index: 0 }),
        event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }),
        event('message_stop', {}),
      ];
    } else if (call.format === 'google' || call.format === 'vertex-ai') {
      const chunk = (text: string, last: boolean) => ({
        candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
        usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 1, totalTokenCount: 3 },
        modelVersion: model,
      });
      events = [chunk('o', false), chunk('k', true)].map((data) => `data: ${JSON.stringify(data)}\r\n\r\n`);
    } else if (call.format === 'cohere') {
      const event = (data: Obj) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
      events = [
        event({ id: 'fuzz-chat', type: 'message-start', delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } } }),
        event({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } }),
        event({ type: 'content-delta', index: 0, delta: { message: { content: { text: 'ok' } } } }),
        event({ type: 'content-end', index: 0 }),
        event({
          type: 'message-end',
          delta: { finish_reason: 'COMPLETE', usage: { billed_units: { input_tokens: 2, output_tokens: 1 }, tokens: { input_tokens: 2, output_tokens: 1 } } },
        }),
      ];
    } else {
      const operation = operationOf(call);
      const object = operation === 'completions' ? 'text_completion' : 'chat.completion.chunk';
      const choice = (text: string, finish: string | null) =>
        operation === 'completions'
          ? { index: 0, text, finish_reason: finish, logprobs: null }
          : { index: 0, delta: finish ? {} : { role: 'assistant', content: text }, finish_reason: finish };
      const chunk = (data: Obj) => `data: ${JSON.stringify({ id: 'chatcmpl-fuzz', object, created: 1715367049, model, ...data })}\n\n`;
      events = [chunk({ choices: [choice('ok', null)] }), chunk({ choices: [choice('', 'stop')] })];
      if (call.json?.stream_options?.include_usage === true)
        events.push(chunk({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } }));
      events.push('data: [DONE]\n\n');
    }
    res.writeHead(200, { ...marker, 'content-type': contentTypeOfStream(call.format), 'cache-control': 'no-cache' });
    for (const event of events) {
      if (res.destroyed) return;
      res.write(event);
      await (drip ? new Promise((resolve) => setTimeout(resolve, 5)) : tick());
    }
    res.end();
  }

  function anthropicMessage(model: string): Obj {
    return {
      id: 'msg_fuzz',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'ok' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 2, output_tokens: 1 },
    };
  }

  function sendProviderError(call: Call, status: number, message = `The fake ${call.format} API was told to answer ${status}.`): void {
    const extra: Record<string, string> = status === 429 || status === 503 ? { 'retry-after-ms': '5', 'retry-after': '0' } : {};
    switch (call.format) {
      case 'anthropic':
        return sendJson(call.res, status, { type: 'error', error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', message } }, extra);
      case 'google':
      case 'vertex-ai':
        return sendJson(call.res, status, { error: { code: status, message, status: status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT' } }, extra);
      case 'bedrock':
        return sendJson(
          call.res,
          status,
          { message },
          {
            ...extra,
            'x-amzn-errortype': `${status >= 500 ? 'InternalServerException' : 'ValidationException'}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
          },
        );
      case 'cohere':
        return sendJson(call.res, status, { message }, extra);
      default:
        return sendJson(
          call.res,
          status,
          { error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } },
          extra,
        );
    }
  }

  function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, { ...marker, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...extra });
    res.end(text);
  }

  async function dripJson(res: ServerResponse, status: number, body: unknown): Promise<void> {
    const text = Buffer.from(JSON.stringify(body));
    res.writeHead(status, { ...marker, 'content-type': 'application/json', 'content-length': text.length });
    for (let offset = 0; offset < text.length && !res.destroyed; offset += 16) {
      res.write(text.subarray(offset, offset + 16));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const baseUrls = Object.fromEntries(providerNames.map((name) => [name, url + basePathOf(name)]));
  return {
    url,
    baseUrls,
    tokenUri: `${url}/p/vertex-ai/token`,
    refusedUrl: `http://127.0.0.1:${options.refusedPort}`,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value.slice(0, 4096) : [];
}

function formatOf(pathname: string): string {
  const match = /^\/p\/([^/]+)\//.exec(pathname);
  const provider = match?.[1] ?? '';
  if (['anthropic', 'google', 'vertex-ai', 'bedrock', 'cohere'].includes(provider)) return provider;
  return 'openai';
}

function contentTypeOfStream(format: string): string {
  return format === 'bedrock' ? 'application/vnd.amazon.eventstream' : 'text/event-stream';
}

function wantsStream(format: string, pathname: string, json: unknown): boolean {
  if (format === 'bedrock') return pathname.endsWith('/converse-stream');
  if (format === 'google' || format === 'vertex-ai') return /:(streamGenerateContent|streamRawPredict)$/.test(pathname);
  return isObj(json) && json.stream === true;
}

const faultPattern = /(?:fuzz-fault-|\/fault\/)([a-z0-9-]+)/;

/** The fault a request asks for, if any (header, then URL, then the body's model). */
function faultOf(req: IncomingMessage, rawUrl: string, json: Obj | undefined): Fault | undefined {
  const candidates = [
    req.headers[faultHeader],
    faultPattern.exec(decodeSafely(rawUrl))?.[1],
    typeof json?.model === 'string' ? faultPattern.exec(json.model)?.[1] : undefined,
  ];
  for (const candidate of candidates) {
    const value = Array.isArray(candidate) ? candidate[0] : candidate;
    if (value && (allFaults as readonly string[]).includes(value)) return value as Fault;
  }
  return undefined;
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
