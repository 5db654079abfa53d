/**
 * A fake Anthropic Messages API over real HTTP (node:http on loopback), plus helpers that drive the
 * anthropic adapter in-process.
 *
 * `POST …/v1/messages/count_tokens` answers `{input_tokens}` (a quarter of the messages' JSON length).
 * `POST …/v1/messages` checks what the gateway sends the way Anthropic does, and answers a check that
 * fails with Anthropic's 400/401 error body, so a wrong mapping fails the calling test:
 *   headers: `x-api-key`, `anthropic-version`, JSON content type; no `authorization` or `x-gateway-*`;
 *   body: only Messages fields (Anthropic rejects unknown ones), `model`, integer `max_tokens`,
 *   alternating user/assistant turns, every `tool_use` answered by a `tool_result` first in the next
 *   user turn, tools with an object `input_schema`, temperature 0–1.
 * Answers, unless `script()` queued one: model `error-<status>` → that status with an Anthropic error
 * body; a turn ending in tool results → text quoting them; tools with a forced `tool_choice` or
 * "weather" in the last user text → a `tool_use` of the chosen (or first) tool; otherwise
 * "echo: <last user text>". `stream: true` answers with Anthropic's named SSE events; model
 * `error-midstream` streams one text delta and then `event: error` (overloaded_error).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TokenUsage } from '../../../lib/core/usage';
import { anthropicProvider } from '../../../lib/providers/anthropic';
import { anthropicAdapter } from '../../../lib/providers/anthropic/adapter';
import type { PreparedCall, ProviderCall } from '../../../lib/providers/types';
import { parseSse } from '../sse';

export interface AnthropicRequestRecord {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  json: any;
}

/** A canned answer: a JSON body with a status, or raw SSE bytes (a recorded fixture). */
export type AnthropicStep = { status: number; json: unknown; headers?: Record<string, string> } | { sse: string | Buffer };

export interface FakeAnthropic {
  /** The base URL the gateway's `x-gateway-custom-host` should name (`http://127.0.0.1:PORT/v1`). */
  url: string;
  requests: AnthropicRequestRecord[];
  /** Answers the next requests with these steps, in order, before the default behaviour resumes. */
  script(...steps: AnthropicStep[]): void;
  close(): Promise<void>;
}

const messagesFields = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'metadata',
  'tools',
  'tool_choice',
  'thinking',
  'stream',
]);
const blockTypes = new Set(['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);
const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export function anthropicErrorBody(status: number, message: string): unknown {
  return { type: 'error', error: { type: errorTypes[status] ?? 'api_error', message } };
}

/** What Anthropic would reject in a request, as messages (empty when it is acceptable). */
export function checkMessagesRequest(headers: AnthropicRequestRecord['headers'], body: any): string[] {
  const problems: string[] = [];
  if (!headers['anthropic-version']) problems.push('anthropic-version: header is required');
  if (!String(headers['content-type'] ?? '').startsWith('application/json')) problems.push('content-type must be application/json');
  if (headers.authorization) problems.push('authorization: the key must travel as x-api-key');
  if (Object.keys(headers).some((name) => name.startsWith('x-gateway-'))) problems.push('x-gateway-* headers leaked to the provider');
  if (!body || typeof body !== 'object') return [...problems, 'body must be a JSON object'];
  for (const key of Object.keys(body)) if (!messagesFields.has(key)) problems.push(`${key}: Extra inputs are not permitted`);
  if (typeof body.model !== 'string') problems.push('model: Field required');
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) problems.push('max_tokens: Field required (a positive integer)');
  if (body.temperature !== undefined && (body.temperature < 0 || body.temperature > 1)) problems.push('temperature: range: 0..1');
  for (const tool of body.tools ?? []) {
    if (typeof tool.name !== 'string' || tool.input_schema?.type !== 'object')
      problems.push(`tools: ${JSON.stringify(tool).slice(0, 80)} needs a name and an object input_schema`);
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) return [...problems, 'messages: at least one message is required'];
  let pendingToolUses: string[] = [];
  body.messages.forEach((message: any, index: number) => {
    const at = `messages.${index}`;
    if (message.role !== 'user' && message.role !== 'assistant') problems.push(`${at}.role: Input should be 'user' or 'assistant'`);
    if (index > 0 && body.messages[index - 1].role === message.role) problems.push(`${at}: roles must alternate between "user" and "assistant"`);
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (!Array.isArray(blocks) || blocks.length === 0) return problems.push(`${at}.content: must be non-empty`);
    blocks.forEach((block: any, position: number) => {
      if (!blockTypes.has(block?.type)) problems.push(`${at}.content.${position}.type: unknown block type ${block?.type}`);
      if (block.type === 'text' && !block.text && typeof message.content !== 'string')
        problems.push(`${at}.content.${position}: text content blocks must be non-empty`);
    });
    if (pendingToolUses.length > 0) {
      const results = blocks.filter((block: any) => block.type === 'tool_result').map((block: any) => block.tool_use_id);
      const leading = blocks.slice(0, results.length).every((block: any) => block.type === 'tool_result');
      if (!pendingToolUses.every((id) => results.includes(id)) || !leading)
        problems.push(`${at}: tool_use ids were found without tool_result blocks immediately after: ${pendingToolUses.join(', ')}`);
    } else if (blocks.some((block: any) => block.type === 'tool_result')) problems.push(`${at}: unexpected tool_use_id found in tool_result blocks`);
    pendingToolUses = message.role === 'assistant' ? blocks.filter((block: any) => block.type === 'tool_use').map((block: any) => block.id) : [];
    for (const block of blocks)
      if (block.type === 'tool_use' && (typeof block.input !== 'object' || Array.isArray(block.input)))
        problems.push(`${at}: tool_use.input must be an object`);
  });
  return problems;
}

function sampleInput(schema: any): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [name, property] of Object.entries<any>(schema?.properties ?? {})) {
    input[name] =
      property?.type === 'number' || property?.type === 'integer' ? 1 : property?.type === 'boolean' ? true : name === 'location' ? 'Paris' : 'example';
  }
  return input;
}

/** The default answer's content blocks for a request. */
function answerBlocks(body: any): any[] {
  const last = body.messages.at(-1);
  const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  const results = blocks.filter((block: any) => block.type === 'tool_result');
  if (results.length > 0) {
    const quoted = results
      .map((block: any) => (typeof block.content === 'string' ? block.content : block.content.map((part: any) => part.text).join('')))
      .join(' | ');
    return [{ type: 'text', text: `The tool said: ${quoted}` }];
  }
  const text = blocks
    .filter((block: any) => block.type === 'text')
    .map((block: any) => block.text)
    .join(' ');
  const choice = body.tool_choice?.type;
  if (body.tools?.length && choice !== 'none' && (choice === 'any' || choice === 'tool' || /weather/i.test(text))) {
    const tool = body.tools.find((candidate: any) => candidate.name === body.tool_choice?.name) ?? body.tools[0];
    const forced = choice === 'tool' || choice === 'any';
    const use = { type: 'tool_use', id: `toolu_fake${Date.now().toString(36)}`, name: tool.name, input: sampleInput(tool.input_schema) };
    return forced ? [use] : [{ type: 'text', text: 'Let me check.' }, use];
  }
  return [{ type: 'text', text: `echo: ${text}` }];
}

function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A whole message as Anthropic's stream events (text in three pieces, tool input in two). */
function streamEvents(message: any, failMidway: boolean): string[] {
  const events = [
    sseEvent('message_start', {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
    }),
  ];
  for (const [index, block] of message.content.entries()) {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { ...block, input: {} };
    events.push(sseEvent('content_block_start', { type: 'content_block_start', index, content_block: start }));
    if (index === 0) events.push(sseEvent('ping', { type: 'ping' }));
    const whole = block.type === 'text' ? block.text : JSON.stringify(block.input);
    const third = Math.ceil(whole.length / 3);
    for (let at = 0; at < whole.length; at += third) {
      const piece = whole.slice(at, at + third);
      events.push(
        sseEvent('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: block.type === 'text' ? { type: 'text_delta', text: piece } : { type: 'input_json_delta', partial_json: piece },
        }),
      );
      if (failMidway) return [...events, sseEvent('error', anthropicErrorBody(529, 'Overloaded'))];
    }
    events.push(sseEvent('content_block_stop', { type: 'content_block_stop', index }));
  }
  events.push(
    sseEvent('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    }),
  );
  return [...events, sseEvent('message_stop', { type: 'message_stop' })];
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const requests: AnthropicRequestRecord[] = [];
  const steps: AnthropicStep[] = [];
  const send = (res: ServerResponse, status: number, json: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake${requests.length}`, ...headers }).end(JSON.stringify(json));
  };
  const answer = async (req: IncomingMessage, res: ServerResponse, raw: string) => {
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) return send(res, 404, anthropicErrorBody(404, `Not found: ${req.method} ${req.url}`));
    let json: any;
    try {
      json = JSON.parse(raw);
    } catch {
      return send(res, 400, anthropicErrorBody(400, 'The request body is not valid JSON.'));
    }
    requests.push({ path: req.url, headers: req.headers, json });
    if (!req.headers['x-api-key']) return send(res, 401, anthropicErrorBody(401, 'x-api-key header is required'));
    if (req.url === '/v1/messages/count_tokens') {
      if (!Array.isArray(json.messages) || typeof json.model !== 'string') return send(res, 400, anthropicErrorBody(400, 'model and messages are required'));
      return send(res, 200, { input_tokens: Math.ceil(JSON.stringify(json.messages).length / 4) });
    }
    const problems = checkMessagesRequest(req.headers, json);
    if (problems.length > 0) return send(res, 400, anthropicErrorBody(400, problems.join('; ')));
    const step = steps.shift();
    if (step && 'sse' in step) return res.writeHead(200, { 'content-type': 'text/event-stream' }).end(step.sse);
    if (step) return send(res, step.status, step.json, step.headers);
    const status = /^error-(\d{3})$/.exec(json.model)?.[1];
    if (status)
      return send(
        res,
        Number(status),
        anthropicErrorBody(Number(status), `Fake ${errorTypes[Number(status)] ?? 'error'} for ${json.model}.`),
        status === '429' ? { 'retry-after': '1' } : {},
      );
    const content = answerBlocks(json);
    const message = {
      id: `msg_fake${requests.length}`,
      type: 'message',
      role: 'assistant',
      model: json.model,
      content,
      stop_reason: content.at(-1).type === 'tool_use' ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: Math.ceil(raw.length / 4), cache_creation_input_tokens: 0, cache_read_input_tokens: 3, output_tokens: 7 },
    };
    if (!json.stream) return send(res, 200, message);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const event of streamEvents(message, json.model === 'error-midstream')) {
      res.write(event);
      await new Promise((resolve) => setImmediate(resolve));
    }
    res.end();
  };
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => void answer(req, res, raw).catch(() => res.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    script: (...more) => steps.push(...more),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---------------------------------------------------------------------------------------------
// In-process: the registered adapter, without HTTP.

export interface CallOptions {
  stream?: boolean;
  strict?: boolean;
  operation?: ProviderCall['operation'];
  requestHeaders?: Record<string, string>;
  apiKey?: string;
}

export function anthropicCall(body: Record<string, unknown>, options: CallOptions = {}): ProviderCall {
  return {
    operation: options.operation ?? 'chat',
    body: { model: 'claude-sonnet-4-20250514', ...body },
    stream: options.stream ?? false,
    target: { provider: anthropicProvider, baseUrl: anthropicProvider.baseUrl, settings: { api_key: options.apiKey ?? 'sk-ant-test' } },
    forwardHeaders: {},
    requestHeaders: options.requestHeaders ?? {},
    strictApiCompliance: options.strict ?? true,
  };
}

export function prepareAnthropic(body: Record<string, unknown>, options: CallOptions = {}): PreparedCall {
  // The adapter itself: the provider's definition loads it on the first call, so answers with a promise then.
  return anthropicAdapter.prepare(anthropicCall(body, options)) as PreparedCall;
}

/** The Anthropic body the adapter sends for an OpenAI request. */
export function anthropicBodyFor(body: Record<string, unknown>, options: CallOptions = {}): any {
  return JSON.parse(prepareAnthropic(body, options).body.toString());
}

/** Feeds provider stream bytes through the adapter's transform (for `request`), `splitEvery` bytes per write. */
export async function replayAnthropicStream(
  bytes: Buffer | string,
  options: CallOptions & { includeUsage?: boolean; splitEvery?: number; request?: Record<string, unknown> } = {},
) {
  const body: Record<string, unknown> = { messages: [{ role: 'user', content: 'hi' }], ...options.request, stream: true };
  if (options.includeUsage) body.stream_options = { include_usage: true };
  const usages: TokenUsage[] = [];
  const transform = prepareAnthropic(body, { ...options, stream: true }).streamTransform((usage) => usages.push(usage));
  const input = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
  let text = '';
  transform.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const ended = new Promise((resolve, reject) => transform.on('end', resolve).on('error', reject));
  const step = options.splitEvery ?? input.length;
  for (let at = 0; at < input.length; at += step) transform.write(input.subarray(at, at + step));
  transform.end();
  await ended;
  const events: any[] = parseSse(text).map((event) => (event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data)));
  return { events, text, usages };
}

/** The chunks' deltas, without the usage-only chunk and [DONE]. */
export function chunkDeltas(events: any[]): any[] {
  return events.filter((event) => event !== '[DONE]' && event.choices?.length).map((event) => event.choices[0].delta);
}

export function streamedContent(events: any[]): string {
  return chunkDeltas(events)
    .map((delta) => delta.content ?? '')
    .join('');
}
