/**
 * A fake Cohere v2 API over real HTTP (node:http on loopback), plus helpers that drive the cohere
 * adapter in-process. The gateway's `x-gateway-custom-host` names `<url>/v2`.
 *
 * `POST /v2/chat` checks what the gateway sends the way Cohere does and answers a failed check with
 * Cohere's error shape (`{"id","message"}`, 400 or 401), so a wrong mapping fails the calling test:
 *   `Authorization: Bearer <key>`; JSON; no `x-gateway-*` headers; only v2 chat fields (no OpenAI
 *   names such as `top_p`, `stop`, `max_completion_tokens`, `n`); roles system/user/assistant/tool;
 *   content parts text/image_url; tool calls with string `arguments`; every tool message answering a
 *   tool call made earlier; `tool_choice` REQUIRED or NONE; `p` within 0.01–0.99.
 * Answers: model `error-<status>` → that status with a Cohere error body; a conversation ending in
 * tool messages → text quoting them; tools with `tool_choice: "REQUIRED"`, or "weather" in the last
 * user text → a tool plan and a call of the first tool; otherwise "echo: <last user text>". With
 * `stream: true` the answer comes as Cohere's SSE events (`event: <type>` + `data: <json>`).
 * `POST /v2/embed` checks `texts`, `input_type` and `embedding_types: ["float"]` and answers with
 * small deterministic float vectors and `meta.billed_units`.
 */
import type { ServerResponse } from 'node:http';
import type { TokenUsage } from '../../../lib/core/usage';
import { cohereProvider } from '../../../lib/providers/cohere';
import { cohereAdapter } from '../../../lib/providers/cohere/adapter';
import type { PreparedCall } from '../../../lib/providers/types';
import { providerCall, replayPrepared, sendJson, sendSse, startRecordingServer, type CallOptions, type RecordedCall, type RecordingServer } from './azure';

export interface FakeCohere extends RecordingServer {
  key: string;
}

const chatFields = new Set([
  'model',
  'messages',
  'stream',
  'tools',
  'strict_tools',
  'documents',
  'citation_options',
  'response_format',
  'safety_mode',
  'max_tokens',
  'stop_sequences',
  'temperature',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'k',
  'p',
  'logprobs',
  'tool_choice',
  'thinking',
  'priority',
]);
const usage = { billed_units: { input_tokens: 9, output_tokens: 6 }, tokens: { input_tokens: 120, output_tokens: 6 }, cached_tokens: 32 };
const cohereError = (message: string) => ({ id: 'fake-error-id', message });

/** What Cohere would reject in a chat request (empty when it is acceptable). */
export function checkChatRequest(body: any): string[] {
  const problems: string[] = [];
  if (!body || typeof body !== 'object') return ['invalid request: body must be JSON'];
  for (const key of Object.keys(body)) if (!chatFields.has(key)) problems.push(`invalid request: unknown field: parameter ${key} is not a valid field`);
  if (typeof body.model !== 'string') problems.push('invalid request: model must be a string');
  if (body.tool_choice !== undefined && body.tool_choice !== 'REQUIRED' && body.tool_choice !== 'NONE')
    problems.push(`invalid request: tool_choice must be REQUIRED or NONE, got ${body.tool_choice}`);
  if (body.p !== undefined && (body.p < 0.01 || body.p > 0.99)) problems.push('invalid request: p must be between 0.01 and 0.99');
  if (!Array.isArray(body.messages) || body.messages.length === 0) return [...problems, 'invalid request: messages must be a non-empty array'];
  const calledIds = new Set<string>();
  body.messages.forEach((message: any, index: number) => {
    const at = `messages[${index}]`;
    if (!['system', 'user', 'assistant', 'tool'].includes(message.role)) problems.push(`invalid request: ${at}.role ${message.role} is not valid`);
    if (Array.isArray(message.content)) {
      for (const part of message.content)
        if (!['text', 'image_url', 'document'].includes(part?.type)) problems.push(`invalid request: ${at} content type ${part?.type} is not valid`);
    }
    for (const call of message.tool_calls ?? []) {
      if (typeof call.function?.arguments !== 'string') problems.push(`invalid request: ${at}.tool_calls arguments must be a string`);
      calledIds.add(call.id);
    }
    if (message.role === 'tool' && !calledIds.has(message.tool_call_id))
      problems.push(`invalid request: ${at}.tool_call_id ${message.tool_call_id} does not match a tool call`);
  });
  return problems;
}

/** Starts the fake; `key` is the API key it accepts. */
export async function startFakeCohere(key = 'cohere-test-key'): Promise<FakeCohere> {
  const server = await startRecordingServer((call, res) => {
    if (call.headers.authorization !== `Bearer ${key}`) return sendJson(res, 401, cohereError('invalid api token'));
    if (Object.keys(call.headers).some((name) => name.startsWith('x-gateway-')))
      return sendJson(res, 400, cohereError('x-gateway-* headers leaked to the provider'));
    const errorStatus = /^error-(\d{3})$/.exec(String(call.json?.model))?.[1];
    if (errorStatus) return sendJson(res, Number(errorStatus), cohereError(`fake cohere error ${errorStatus}`));
    if (call.path === '/v2/embed') return answerEmbed(call, res);
    if (call.path !== '/v2/chat') return sendJson(res, 404, cohereError(`no route ${call.path}`));
    const problems = checkChatRequest(call.json);
    if (problems.length) return sendJson(res, 400, cohereError(problems.join('; ')));
    return answerChat(call.json, res);
  });
  return { ...server, key };
}

function answerEmbed(call: RecordedCall, res: ServerResponse): void {
  const body = call.json;
  if (!Array.isArray(body?.texts) || typeof body.input_type !== 'string' || JSON.stringify(body.embedding_types) !== '["float"]') {
    return sendJson(res, 400, cohereError('invalid request: texts, input_type and embedding_types ["float"] are required'));
  }
  const vectors = body.texts.map((text: string, index: number) => [text.length / 8, -0.5, index + 0.25]);
  sendJson(res, 200, {
    id: 'embed-fake',
    embeddings: { float: vectors },
    texts: body.texts,
    meta: { api_version: { version: '2' }, billed_units: { input_tokens: 3 * body.texts.length } },
  });
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: any) => part.text ?? '').join(' ') : '';

function answerChat(body: any, res: ServerResponse): void | Promise<void> {
  const messages: any[] = body.messages;
  const results = [];
  for (let at = messages.length - 1; at >= 0 && messages[at].role === 'tool'; at--) results.unshift(textOf(messages[at].content));
  const userText = textOf([...messages].reverse().find((message) => message.role === 'user')?.content);
  const callTool = !results.length && body.tools?.length && body.tool_choice !== 'NONE' && (body.tool_choice === 'REQUIRED' || /weather/i.test(userText));
  const toolCall = callTool
    ? { id: 'get_weather_fk3x9q2b7m1n', type: 'function', function: { name: body.tools[0].function.name, arguments: '{"location":"Paris"}' } }
    : undefined;
  const text = results.length ? `the tools said: ${results.join(' | ')}` : `echo: ${userText}`;
  const finish = toolCall ? 'TOOL_CALL' : 'COMPLETE';
  if (!body.stream) {
    const message = toolCall
      ? { role: 'assistant', tool_plan: 'I will look up the weather.', tool_calls: [toolCall] }
      : { role: 'assistant', content: [{ type: 'text', text }] };
    return sendJson(res, 200, { id: 'cohere-fake-0001', finish_reason: finish, message, usage });
  }
  const event = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const events = [
    event({
      id: 'cohere-fake-0001',
      type: 'message-start',
      delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
    }),
  ];
  if (toolCall) {
    events.push(event({ type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will look up the weather.' } } }));
    events.push(
      event({
        type: 'tool-call-start',
        index: 0,
        delta: { message: { tool_calls: { ...toolCall, function: { name: toolCall.function.name, arguments: '' } } } },
      }),
    );
    for (const piece of toolCall.function.arguments.match(/.{1,6}/g)!)
      events.push(event({ type: 'tool-call-delta', index: 0, delta: { message: { tool_calls: { function: { arguments: piece } } } } }));
    events.push(event({ type: 'tool-call-end', index: 0 }));
  } else {
    events.push(event({ type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } }));
    for (const piece of text.match(/\S+\s*/g) ?? []) events.push(event({ type: 'content-delta', index: 0, delta: { message: { content: { text: piece } } } }));
    events.push(event({ type: 'content-end', index: 0 }));
  }
  events.push(event({ type: 'message-end', delta: { finish_reason: finish, usage } }));
  return sendSse(res, events);
}

// ---------------------------------------------------------------------------------------------
// In-process helpers

export function prepareCohere(body: Record<string, unknown>, options: CallOptions = {}): PreparedCall {
  // The adapter itself: the provider's definition loads it on the first call, so answers with a promise then.
  return cohereAdapter.prepare(providerCall(cohereProvider, body, { settings: { api_key: 'cohere-test-key' }, ...options })) as PreparedCall;
}

/** The Cohere body the adapter sends for an OpenAI request. */
export function cohereBodyFor(body: Record<string, unknown>, options: CallOptions = {}): any {
  return JSON.parse(String(prepareCohere(body, options).body));
}

/** Cohere stream events (JSON objects, as in the recorded `.jsonl` fixture) as the SSE bytes Cohere sends. */
export function cohereSse(events: Array<Record<string, unknown> | string>): string {
  return events
    .map((line) => (typeof line === 'string' ? JSON.parse(line) : line))
    .map((data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('');
}

/** Replays Cohere stream events through the adapter's stream transform. */
export function replayCohereStream(
  events: Array<Record<string, unknown> | string>,
  options: CallOptions & { includeUsage?: boolean; splitEvery?: number } = {},
): Promise<{ events: any[]; usages: TokenUsage[]; text: string }> {
  const body = {
    model: 'command-r-plus-08-2024',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    stream_options: options.includeUsage ? { include_usage: true } : undefined,
  };
  return replayPrepared(prepareCohere(body, { stream: true, ...options }), cohereSse(events), options.splitEvery);
}
