/**
 * A fake Azure OpenAI resource and Azure AI model inference endpoint over real HTTP (node:http on
 * loopback), plus helpers that drive OpenAI-format adapters in-process.
 *
 * Paths (the gateway's `x-gateway-custom-host` names `<url>/openai` for azure-openai and `<url>`
 * or `<url>/models` for azure-ai):
 *   POST /openai/deployments/{deployment}/{chat/completions|embeddings}?api-version=…  (Azure OpenAI)
 *   POST /openai/v1/chat/completions                                                   (v1 API; deployment = body model)
 *   POST /openai/responses?api-version=…, /openai/v1/responses                          (Responses API; deployment = body model)
 *   POST [/models]/{chat/completions|embeddings}?api-version=…                           (azure-ai)
 * Checks, answered like Azure (404 without api-version, 401 without credentials, 400 otherwise), so a
 * wrong mapping fails the calling test: an `api-key` equal to `key`, or `Authorization: Bearer`
 * with an Entra ID token (a JWT; for azure-ai also the key); never both; no `x-gateway-*` headers; a JSON body with `messages` (chat) or `input`.
 * azure-ai paths also need `extra-parameters`.
 * Answers, by deployment (azure-openai) or body model (azure-ai): `error-content-filter` → a 400
 * refusing the prompt (`contentFilterErrorBody`); `error-<status>` → that status with an Azure error body;
 * `filtered-output` → text ending in `finish_reason: "content_filter"`. A conversation ending in a
 * tool message → text quoting it; tools with `tool_choice: "required"` (or a named one), or "weather"
 * in the last user text → a call of that (or the first) tool; otherwise "echo: <last user text>".
 * Streams are Azure's: a leading chunk with no id and `prompt_filter_results`, per-choice
 * `content_filter_results`, a usage chunk when `stream_options.include_usage` is set, `[DONE]`.
 * The Responses paths answer as OpenAI's Responses API does (openai-responses.ts: "echo: <last user
 * text> (turn N)", responses kept per fake for `previous_response_id`); as at Azure, they are not
 * under the deployments, and a dated api-version before 2025-03-01-preview does not have them (404).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { TokenUsage } from '../../../lib/core/usage';
import type { PreparedCall, ProviderCall, ProviderDefinition, ProviderSettings } from '../../../lib/providers/types';
import { parseSse } from '../sse';
import { fakeResponsesApi } from './openai-responses';

export interface RecordedCall {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  json: any;
}

export interface RecordingServer {
  url: string;
  requests: RecordedCall[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that records every request (body parsed as JSON when it is JSON) and
 * hands it to `answer`. Shared by the provider fakes in this folder.
 */
export async function startRecordingServer(answer: (call: RecordedCall, res: ServerResponse) => void | Promise<void>): Promise<RecordingServer> {
  const requests: RecordedCall[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        json = undefined;
      }
      const call: RecordedCall = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, json };
      requests.push(call);
      Promise.resolve(answer(call, res)).catch((error: Error) => {
        if (!res.headersSent) sendJson(res, 500, { message: `fake crashed: ${error.message}` });
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Writes SSE events one per socket write, each in its own macrotask, then ends. */
export async function sendSse(res: ServerResponse, events: string[]): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const event of events) {
    res.write(event);
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

export interface FakeAzure extends RecordingServer {
  /** The API key the fake accepts in `api-key` (any bearer token is accepted). */
  key: string;
}

const safe = { filtered: false, severity: 'safe' };
const filterResults = { hate: safe, self_harm: safe, sexual: safe, violence: safe };
const azureError = (status: number, code: string, message: string) => ({ error: { code, message, status } });

export const contentFilterErrorMessage = 'fake azure: the content filter refused this prompt.';
/**
 * The fake's refusal of a prompt: the OpenAI error envelope as Azure fills it for a content-filter
 * 400, with `type: null` and the status repeated, so the gateway's mapping of both is exercised.
 * Azure's per-category details (`innererror`) are left out: the gateway does not relay them.
 */
export const contentFilterErrorBody = {
  error: { message: contentFilterErrorMessage, type: null, param: 'prompt', code: 'content_filter', status: 400 },
};

/** What Azure would reject in a request (empty when it is acceptable). */
export function checkAzureRequest(call: RecordedCall, key: string, azureAI: boolean): { status: number; problems: string[] } {
  const problems: string[] = [];
  const url = new URL(call.path, 'http://fake');
  if (!url.pathname.startsWith('/openai/v1/') && !url.searchParams.get('api-version'))
    return { status: 404, problems: ['Resource not found (api-version is missing)'] };
  if (url.pathname.endsWith('/responses') && !azureAI && !respondsAt(url))
    return {
      status: 404,
      problems: ['Resource not found (the Responses API is /openai/responses with api-version 2025-03-01-preview or later, or /openai/v1/responses)'],
    };
  const apiKey = call.headers['api-key'];
  const bearer = /^Bearer (.+)$/.exec(String(call.headers.authorization ?? ''))?.[1];
  if (apiKey && bearer) problems.push('send either api-key or Authorization, not both');
  if (!bearer && apiKey !== key) return { status: 401, problems: ['Access denied due to invalid subscription key or wrong API endpoint.'] };
  // Azure OpenAI takes only Entra ID tokens as bearers; Azure AI endpoints take their key that way too.
  if (bearer && !azureAI && !bearer.startsWith('eyJ')) return { status: 401, problems: ['Invalid token: a bearer must be an Entra ID access token.'] };
  if (Object.keys(call.headers).some((name) => name.startsWith('x-gateway-'))) problems.push('x-gateway-* headers leaked to the provider');
  if (azureAI && !call.headers['extra-parameters']) problems.push('extra-parameters header missing (unknown parameters would be rejected)');
  const body = call.json;
  if (!body || typeof body !== 'object') problems.push('body must be JSON');
  else if (url.pathname.endsWith('/chat/completions') && (!Array.isArray(body.messages) || body.messages.length === 0))
    problems.push("'messages' is a required property");
  else if (url.pathname.endsWith('/embeddings') && body.input === undefined) problems.push("'input' is a required property");
  else if (url.pathname.endsWith('/responses') && typeof body.model !== 'string') problems.push("'model' is a required property (the deployment name)");
  return { status: problems.length ? 400 : 200, problems };
}

/** Where Azure serves the Responses API: beside the deployments with a recent dated api-version, or on the v1 API. */
function respondsAt(url: URL): boolean {
  if (url.pathname === '/openai/v1/responses') return true;
  return url.pathname === '/openai/responses' && (url.searchParams.get('api-version') ?? '') >= '2025-03-01';
}

/** Starts the fake; `key` is the API key it accepts. */
export async function startFakeAzure(key = 'azure-test-key-0123456789abcdef'): Promise<FakeAzure> {
  const responses = fakeResponsesApi();
  const server = await startRecordingServer((call, res) => {
    const url = new URL(call.path, 'http://fake');
    const azureAI = !url.pathname.startsWith('/openai/');
    const { status, problems } = checkAzureRequest(call, key, azureAI);
    if (status !== 200)
      return sendJson(res, status, azureError(status, status === 401 ? '401' : status === 404 ? '404' : 'BadRequest', `fake azure: ${problems.join('; ')}`));
    const deployment = /\/deployments\/([^/]+)\//.exec(url.pathname)?.[1];
    const model = decodeURIComponent(deployment ?? String(call.json.model ?? ''));
    if (model === 'error-content-filter') return sendJson(res, 400, contentFilterErrorBody);
    const errorStatus = /^error-(\d{3})$/.exec(model)?.[1];
    if (errorStatus)
      return sendJson(
        res,
        Number(errorStatus),
        azureError(Number(errorStatus), errorStatus === '429' ? '429' : 'InternalServerError', `fake azure error ${errorStatus}`),
      );
    if (url.pathname.endsWith('/responses')) {
      const answer = responses.answer(call.json);
      return 'events' in answer ? sendSse(res, answer.events) : sendJson(res, answer.status, answer.json);
    }
    if (url.pathname.endsWith('/embeddings')) {
      const inputs: unknown[] = Array.isArray(call.json.input) ? call.json.input : [call.json.input];
      return sendJson(res, 200, {
        object: 'list',
        model: 'text-embedding-3-small',
        data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.25, -0.5, index] })),
        usage: { prompt_tokens: 4, total_tokens: 4 },
      });
    }
    return answerChat(call.json, model, res);
  });
  return { ...server, key };
}

interface PlannedAnswer {
  text?: string;
  toolCall?: { id: string; name: string; arguments: string };
  finish: 'stop' | 'tool_calls' | 'content_filter';
}

function planAnswer(body: any, model: string): PlannedAnswer {
  const messages: any[] = body.messages;
  const last = messages.at(-1);
  if (last?.role === 'tool')
    return { text: `the tool said: ${typeof last.content === 'string' ? last.content : JSON.stringify(last.content)}`, finish: 'stop' };
  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  const userText = typeof lastUser?.content === 'string' ? lastUser.content : (lastUser?.content ?? []).map((part: any) => part.text ?? '').join(' ');
  const tools: any[] = body.tools ?? [];
  const named = body.tool_choice?.function?.name;
  if (tools.length && body.tool_choice !== 'none' && (named || body.tool_choice === 'required' || /weather/i.test(userText))) {
    const name = named ?? tools[0].function.name;
    return { toolCall: { id: `call_${'az'.repeat(12)}`, name, arguments: JSON.stringify({ location: 'Paris' }) }, finish: 'tool_calls' };
  }
  return { text: `echo: ${userText}`, finish: model === 'filtered-output' ? 'content_filter' : 'stop' };
}

function answerChat(body: any, model: string, res: ServerResponse): void | Promise<void> {
  const answer = planAnswer(body, model);
  const id = 'chatcmpl-fakeazure0001';
  const created = 1750697159;
  const served = 'gpt-4o-2024-08-06';
  const usage = {
    prompt_tokens: 12,
    completion_tokens: 5,
    total_tokens: 17,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  const toolCalls = answer.toolCall && [
    { id: answer.toolCall.id, type: 'function', function: { name: answer.toolCall.name, arguments: answer.toolCall.arguments } },
  ];
  if (!body.stream) {
    return sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: served,
      system_fingerprint: 'fp_fake',
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: filterResults }],
      choices: [
        {
          index: 0,
          finish_reason: answer.finish,
          logprobs: null,
          content_filter_results: filterResults,
          message: { role: 'assistant', content: answer.text ?? null, refusal: null, tool_calls: toolCalls },
        },
      ],
      usage,
    });
  }
  const chunk = (delta: unknown, finish: string | null, filters: unknown = filterResults) =>
    `data: ${JSON.stringify({ choices: [{ content_filter_results: filters, delta, finish_reason: finish, index: 0, logprobs: null }], created, id, model: served, object: 'chat.completion.chunk', system_fingerprint: 'fp_fake' })}\n\n`;
  const events = [
    `data: ${JSON.stringify({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{ prompt_index: 0, content_filter_results: filterResults }] })}\n\n`,
    chunk({ content: '', refusal: null, role: 'assistant' }, null, {}),
  ];
  if (answer.toolCall) {
    const { id: callId, name, arguments: args } = answer.toolCall;
    events.push(chunk({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name, arguments: '' } }] }, null, {}));
    for (let at = 0; at < args.length; at += 7) events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(at, at + 7) } }] }, null, {}));
  } else {
    for (const piece of answer.text!.match(/\S+\s*/g) ?? ['']) events.push(chunk({ content: piece }, null));
  }
  events.push(chunk({}, answer.finish, {}));
  if (body.stream_options?.include_usage)
    events.push(`data: ${JSON.stringify({ choices: [], created, id, model: served, object: 'chat.completion.chunk', usage })}\n\n`);
  events.push('data: [DONE]\n\n');
  return sendSse(res, events);
}

// ---------------------------------------------------------------------------------------------
// In-process helpers

export interface CallOptions {
  operation?: ProviderCall['operation'];
  stream?: boolean;
  baseUrl?: string;
  settings?: ProviderSettings;
  requestHeaders?: Record<string, string>;
  strictApiCompliance?: boolean;
  /** Send the body's JSON as the client's bytes (as the gateway does when nothing overrides it). */
  clientBytes?: boolean;
}

/** A ProviderCall for a provider definition, as the gateway builds one. */
export function providerCall(provider: ProviderDefinition, body: Record<string, unknown>, options: CallOptions = {}): ProviderCall {
  const settings = { api_key: 'azure-test-key-0123456789abcdef', ...options.settings };
  return {
    operation: options.operation ?? 'chat',
    body,
    clientBytes: options.clientBytes ? Buffer.from(JSON.stringify(body)) : undefined,
    stream: options.stream ?? body.stream === true,
    target: { provider, baseUrl: options.baseUrl ?? (provider.baseUrlFor ? provider.baseUrlFor(settings) : provider.baseUrl), settings },
    forwardHeaders: {},
    requestHeaders: options.requestHeaders ?? {},
    strictApiCompliance: options.strictApiCompliance ?? true,
  };
}

/** Feeds provider stream bytes through a prepared call's transform in `splitEvery`-byte reads. */
export async function replayPrepared(
  prepared: PreparedCall,
  bytes: Buffer | string,
  splitEvery = 13,
): Promise<{ text: string; events: any[]; usages: TokenUsage[] }> {
  const input = typeof bytes === 'string' ? Buffer.from(bytes) : bytes;
  const pieces: Buffer[] = [];
  for (let at = 0; at < input.length; at += splitEvery) pieces.push(input.subarray(at, at + splitEvery));
  const usages: TokenUsage[] = [];
  let text = '';
  for await (const chunk of Readable.from(pieces).pipe(prepared.streamTransform((usage) => usages.push(usage)))) text += chunk.toString();
  return { text, events: parseSse(text).map((event) => (event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data))), usages };
}

/** The text of a replayed OpenAI chunk stream. */
export function streamedText(events: any[]): string {
  return events.map((event) => (event === '[DONE]' ? '' : (event.choices?.[0]?.delta?.content ?? ''))).join('');
}
