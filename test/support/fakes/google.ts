/**
 * A fake Google over real HTTP (node:http on loopback) speaking the Gemini API, Vertex AI and the
 * OAuth token endpoint, and checking what the gateway sends. Paths are matched on their end, so any
 * base path works (`/v1beta`, `/v1/projects/p/locations/r`, …):
 *   POST …/models/{m}:generateContent | :streamGenerateContent?alt=sse | :batchEmbedContents  Gemini API, `x-goog-api-key` checked
 *   POST …/publishers/google/models/{m}:generateContent | :streamGenerateContent?alt=sse | :predict  Vertex, Bearer token checked
 *   POST …/publishers/anthropic/models/{m}:rawPredict | :streamRawPredict  Claude on Vertex (Anthropic Messages)
 *   POST /token  JWT-bearer grant: the assertion's RS256 signature is verified against the service account's public key
 * Replies: "echo: <last user text>"; a function call when tools are given and the mode is ANY, a
 * function is named, or the text says "call a tool" (every tool for "call all tools"); after tool
 * results, "results: <JSON>". Function calls are signed, and a later turn must carry the signature
 * back (or Google's skip value), as Gemini 3 demands. Model `error-<status>` answers that status;
 * `error-midstream` streams a chunk and then an error chunk. Streams are framed with CRLF as Google's are.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, verify, type KeyObject } from 'node:crypto';
import { fakeEmbedding } from '../fake-upstream';

type Obj = Record<string, any>;

export interface GoogleRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  json?: any;
  /** The decoded JWT claims of a token request. */
  claims?: Obj;
}

export interface FakeGoogleOptions {
  apiKey?: string;
  /** Vertex access tokens accepted as they are (besides the ones the token endpoint issued). */
  accessTokens?: string[];
  serviceAccount?: { clientEmail: string; privateKeyId?: string; publicKey: KeyObject };
  /** `expires_in` of issued tokens (default 3599). */
  tokenLifetimeSeconds?: number;
}

export type FakeGoogleStep = { status: number; json?: unknown; rawSse?: string; headers?: Record<string, string> };

export interface FakeGoogle {
  url: string;
  /** Where the test service account's `token_uri` points. */
  tokenUri: string;
  requests: GoogleRequest[];
  /** Successful token exchanges. */
  readonly exchanges: number;
  issuedTokens: string[];
  options: FakeGoogleOptions;
  /** Answers the next model requests (not token requests) with these, in order. */
  script(...steps: FakeGoogleStep[]): void;
  close(): Promise<void>;
}

const statusNames: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};
export const googleErrorBody = (code: number, message: string) => ({ error: { code, message, status: statusNames[code] ?? 'UNKNOWN' } });
export const skipSignature = 'skip_thought_signature_validator';
const tokens = (text: string) => Math.ceil(text.length / 4);
const requestKeys = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'safetySettings', 'generationConfig', 'cachedContent', 'labels']);
const configKeys = new Set([
  'temperature',
  'topP',
  'topK',
  'maxOutputTokens',
  'stopSequences',
  'candidateCount',
  'seed',
  'presencePenalty',
  'frequencyPenalty',
  'responseMimeType',
  'responseJsonSchema',
  'thinkingConfig',
]);
const partKeys = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse'];

class Reject extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function sample(schema: Obj | undefined): unknown {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  if (schema?.enum) return schema.enum[0];
  if (type === 'object' || schema?.properties)
    return Object.fromEntries(Object.entries(schema?.properties ?? {}).map(([key, value]) => [key, sample(value as Obj)]));
  return { string: 'example', integer: 1, number: 1.5, boolean: true, array: [] }[type as string] ?? 'example';
}

/** What Gemini checks of a GenerateContentRequest, as far as the gateway is concerned. */
function checkGenerateRequest(body: Obj, signatures: Set<string>): void {
  for (const key of Object.keys(body))
    if (!requestKeys.has(key)) throw new Reject(400, `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`);
  for (const key of Object.keys(body.generationConfig ?? {})) if (!configKeys.has(key)) throw new Reject(400, `Unknown name "${key}" at 'generation_config'.`);
  if (!Array.isArray(body.contents) || body.contents.length === 0) throw new Reject(400, '* GenerateContentRequest.contents: contents is not specified');
  body.contents.forEach((content: Obj, index: number) => {
    if (content.role !== 'user' && content.role !== 'model') throw new Reject(400, `Please use a valid role: user, model. (contents[${index}])`);
    if (!Array.isArray(content.parts) || content.parts.length === 0) throw new Reject(400, `contents[${index}].parts must not be empty`);
    for (const part of content.parts) {
      if (partKeys.filter((key) => key in part).length !== 1) throw new Reject(400, `contents[${index}]: a part holds exactly one of ${partKeys.join(', ')}`);
      if (part.fileData && !part.fileData.mimeType) throw new Reject(400, 'fileData.mimeType is required');
    }
    const calls = content.parts.filter((part: Obj) => part.functionCall);
    if (calls.length === 0) return;
    if (content.role !== 'model') throw new Reject(400, 'functionCall parts belong in model turns');
    const signature = calls[0].thoughtSignature;
    if (!signatures.has(signature) && signature !== skipSignature)
      throw new Reject(400, `Function call is missing a thought_signature in functionCall parts (contents[${index}]).`);
    const next = body.contents[index + 1];
    const answers = (next?.parts ?? []).filter((part: Obj) => part.functionResponse);
    if (
      next &&
      (next.role !== 'user' ||
        answers.length !== calls.length ||
        answers.some((part: Obj, i: number) => part.functionResponse.name !== calls[i].functionCall.name))
    ) {
      throw new Reject(
        400,
        'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
      );
    }
  });
  for (const declaration of body.tools?.[0]?.functionDeclarations ?? []) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$/.test(declaration.name)) throw new Reject(400, `Invalid function name "${declaration.name}"`);
  }
}

/** The fake model's answer: the parts and the prompt size. */
function answer(body: Obj, signatures: Set<string>): { parts: Obj[]; promptTokens: number } {
  const contents: Obj[] = body.contents;
  const text = (content: Obj | undefined) => (content?.parts ?? []).map((part: Obj) => part.text ?? '').join('');
  const promptTokens = tokens(JSON.stringify(contents) + JSON.stringify(body.systemInstruction ?? ''));
  const last = contents.at(-1)!;
  const results = last.parts.filter((part: Obj) => part.functionResponse);
  if (results.length) return { parts: [{ text: `results: ${JSON.stringify(results.map((part: Obj) => part.functionResponse))}` }], promptTokens };
  const lastText = text(last);
  const declarations: Obj[] = body.tools?.[0]?.functionDeclarations ?? [];
  const config = body.toolConfig?.functionCallingConfig ?? {};
  const allowed: string[] | undefined = config.allowedFunctionNames;
  const wanted = config.mode !== 'NONE' && declarations.length > 0 && (config.mode === 'ANY' || /call (a|all) tools?/.test(lastText));
  if (!wanted) return { parts: [{ text: `echo: ${lastText}` }], promptTokens };
  const chosen = lastText.includes('call all tools') ? declarations : [declarations.find((d) => !allowed || allowed.includes(d.name)) ?? declarations[0]];
  const parts = chosen.map((declaration, index) => {
    const part: Obj = { functionCall: { name: declaration.name, args: sample(declaration.parametersJsonSchema ?? declaration.parameters) } };
    if (index === 0) {
      // Of parallel calls, Gemini signs only the first.
      part.thoughtSignature = randomBytes(24).toString('base64');
      signatures.add(part.thoughtSignature);
    }
    return part;
  });
  return { parts, promptTokens };
}

function verifyAssertion(form: URLSearchParams, fake: FakeGoogle): Obj {
  const account = fake.options.serviceAccount;
  if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') throw new Reject(400, 'unsupported_grant_type');
  const [header, claims, signature] = (form.get('assertion') ?? '').split('.');
  const decode = (part: string) => JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8'));
  const head = decode(header);
  const payload = decode(claims);
  if (
    !account ||
    head.alg !== 'RS256' ||
    !verify('RSA-SHA256', Buffer.from(`${header}.${claims}`), account.publicKey, Buffer.from(signature ?? '', 'base64url'))
  ) {
    throw new Reject(400, 'invalid_grant: Invalid JWT Signature.');
  }
  const now = Math.floor(Date.now() / 1000);
  if (account.privateKeyId && head.kid !== account.privateKeyId) throw new Reject(400, 'invalid_grant: unknown kid');
  if (payload.iss !== account.clientEmail || payload.sub !== account.clientEmail) throw new Reject(400, 'invalid_grant: iss/sub is not the service account');
  if (payload.aud !== fake.tokenUri) throw new Reject(400, `invalid_grant: aud ${payload.aud} is not ${fake.tokenUri}`);
  if (payload.scope !== 'https://www.googleapis.com/auth/cloud-platform') throw new Reject(400, 'invalid_scope');
  if (payload.exp - payload.iat > 3600 || Math.abs(payload.iat - now) > 300)
    throw new Reject(400, 'invalid_grant: Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
  return payload;
}

const sseBody = (chunks: unknown[]) => chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join('');

function geminiReply(res: ServerResponse, body: Obj, model: string, method: string, vertex: boolean, signatures: Set<string>): void {
  const { parts, promptTokens } = answer(body, signatures);
  const max = body.generationConfig?.maxOutputTokens;
  const outputText = parts.map((part) => part.text ?? '').join('');
  const truncated = typeof max === 'number' && tokens(outputText) > max;
  if (truncated) parts[0].text = parts[0].text.slice(0, max * 4);
  const candidatesTokenCount = tokens(JSON.stringify(parts));
  const usage = { promptTokenCount: promptTokens, candidatesTokenCount, thoughtsTokenCount: 7, totalTokenCount: promptTokens + candidatesTokenCount + 7 };
  const base = { modelVersion: model, responseId: `fake${randomBytes(6).toString('hex')}`, ...(vertex ? { createTime: new Date().toISOString() } : {}) };
  const finishReason = truncated ? 'MAX_TOKENS' : 'STOP';
  if (method === 'generateContent') {
    const count = body.generationConfig?.candidateCount ?? 1;
    const candidates = Array.from({ length: count }, (_, index) => ({ content: { role: 'model', parts }, finishReason, index }));
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify({ candidates, usageMetadata: usage, ...base }));
    return;
  }
  // Text comes in three pieces; a function call arrives whole, as Gemini sends it.
  const pieces: Obj[][] = parts[0].text
    ? [0, 1, 2].map((i) => [{ text: parts[0].text.slice(Math.floor((i * parts[0].text.length) / 3), Math.floor(((i + 1) * parts[0].text.length) / 3)) }])
    : [parts];
  const chunks: Obj[] = pieces.map((piece, index) => {
    const lastChunk = index === pieces.length - 1;
    const candidate: Obj = { content: { role: 'model', parts: piece }, ...(vertex ? {} : { index: 0 }), ...(lastChunk ? { finishReason } : {}) };
    // Gemini reports cumulative usage on every chunk; Vertex only on the last.
    const usageMetadata = vertex && !lastChunk ? { trafficType: 'ON_DEMAND' } : { ...usage, ...(vertex ? { trafficType: 'ON_DEMAND' } : {}) };
    return { candidates: [candidate], usageMetadata, ...base };
  });
  if (model === 'error-midstream') chunks.splice(1, chunks.length, googleErrorBody(503, 'The model is overloaded. Please try again later.'));
  res.writeHead(200, { 'content-type': 'text/event-stream' }).end(sseBody(chunks));
}

/** Claude on Vertex: checks the rawPredict body and answers in the Messages format. */
function claudeReply(res: ServerResponse, body: Obj, model: string, stream: boolean): void {
  if (body.anthropic_version !== 'vertex-2023-10-16') throw new Reject(400, 'anthropic_version: vertex-2023-10-16 is required');
  if ('model' in body) throw new Reject(400, 'model: Extra inputs are not permitted');
  if (typeof body.max_tokens !== 'number' || !Array.isArray(body.messages)) throw new Reject(400, 'max_tokens and messages are required');
  if (stream !== (body.stream === true)) throw new Reject(400, 'stream must match the method');
  const last = body.messages.at(-1);
  const text =
    typeof last.content === 'string'
      ? last.content
      : last.content.map((block: Obj) => block.text ?? (typeof block.content === 'string' ? block.content : JSON.stringify(block.content ?? ''))).join('');
  const tool = body.tools?.length && (body.tool_choice?.type === 'any' || text.includes('call a tool')) ? body.tools[0] : undefined;
  const content = tool
    ? [{ type: 'tool_use', id: `toolu_fake${randomBytes(4).toString('hex')}`, name: tool.name, input: sample(tool.input_schema) }]
    : [{ type: 'text', text: `echo: ${text}` }];
  const usage = { input_tokens: tokens(JSON.stringify(body.messages)), output_tokens: tokens(JSON.stringify(content)) };
  const message = {
    id: `msg_vrtx_fake${randomBytes(4).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: tool ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage,
  };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(message));
    return;
  }
  const block = content[0] as Obj;
  const events: Array<[string, Obj]> = [
    ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: tool ? { ...block, input: {} } : { type: 'text', text: '' } }],
    [
      'content_block_delta',
      {
        type: 'content_block_delta',
        index: 0,
        delta: tool ? { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } : { type: 'text_delta', text: block.text },
      },
    ],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    [
      'message_delta',
      { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } },
    ],
    ['message_stop', { type: 'message_stop' }],
  ];
  res.writeHead(200, { 'content-type': 'text/event-stream' }).end(events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
}

function embeddingsReply(res: ServerResponse, body: Obj, model: string, vertex: boolean): void {
  if (vertex) {
    const dims = body.parameters?.outputDimensionality ?? 8;
    const predictions = body.instances.map((instance: Obj) => ({
      embeddings: { values: Array.from(fakeEmbedding(instance.content, dims)), statistics: { token_count: tokens(instance.content), truncated: false } },
    }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ predictions }));
    return;
  }
  for (const request of body.requests) if (request.model !== `models/${model}`) throw new Reject(400, `requests[].model must be models/${model}`);
  const embeddings = body.requests.map((request: Obj) => ({
    values: Array.from(fakeEmbedding(request.content.parts[0].text, request.outputDimensionality ?? 8)),
  }));
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ embeddings }));
}

export async function startFakeGoogle(options: FakeGoogleOptions = {}): Promise<FakeGoogle> {
  const apiKey = options.apiKey ?? 'gemini-test-key';
  const signatures = new Set<string>();
  const steps: FakeGoogleStep[] = [];
  let exchanges = 0;

  const handle = (req: IncomingMessage, res: ServerResponse, raw: Buffer): void => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const record: GoogleRequest = { method: req.method ?? 'GET', path: url.pathname + url.search, headers: req.headers };
    fake.requests.push(record);
    if (url.pathname.endsWith('/token')) {
      const claims = verifyAssertion(new URLSearchParams(raw.toString('utf8')), fake);
      record.claims = claims;
      exchanges++;
      const token = `ya29.fake-${exchanges}-${randomBytes(6).toString('hex')}`;
      fake.issuedTokens.push(token);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: token, expires_in: options.tokenLifetimeSeconds ?? 3599, token_type: 'Bearer' }));
      return;
    }
    const match = /\/(publishers\/(google|anthropic)\/)?models\/([^/:]+):(\w+)$/.exec(url.pathname);
    if (!match || req.method !== 'POST') throw new Reject(404, `Not found: ${req.method} ${url.pathname}`);
    const [, , publisher, encodedModel, method] = match;
    const model = decodeURIComponent(encodedModel);
    if (publisher) {
      const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
      if (!bearer || !(fake.issuedTokens.includes(bearer) || options.accessTokens?.includes(bearer))) {
        throw new Reject(
          401,
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
        );
      }
    } else if (req.headers['x-goog-api-key'] !== apiKey) {
      throw req.headers['x-goog-api-key']
        ? new Reject(400, 'API key not valid. Please pass a valid API key.')
        : new Reject(
            403,
            "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
          );
    }
    record.json = JSON.parse(raw.toString('utf8'));
    const step = steps.shift();
    if (step) {
      res
        .writeHead(step.status, { 'content-type': step.rawSse ? 'text/event-stream' : 'application/json', ...step.headers })
        .end(step.rawSse ?? JSON.stringify(step.json));
      return;
    }
    const status = /^error-(\d{3})$/.exec(model)?.[1];
    if (status) throw new Reject(Number(status), `The fake was asked to fail with ${status}.`);
    if (publisher === 'anthropic') return claudeReply(res, record.json, model, method === 'streamRawPredict');
    const stream = method === 'streamGenerateContent';
    if (stream && url.searchParams.get('alt') !== 'sse') throw new Reject(400, 'The fake only streams with alt=sse');
    if (method === 'batchEmbedContents' || method === 'predict') return embeddingsReply(res, record.json, model, Boolean(publisher));
    if (method !== 'generateContent' && !stream) throw new Reject(404, `Unknown method ${method}`);
    checkGenerateRequest(record.json, signatures);
    geminiReply(res, record.json, model, method, Boolean(publisher), signatures);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks));
      } catch (error) {
        const status = error instanceof Reject ? error.status : 500;
        const body = req.url?.endsWith('/token')
          ? { error: error instanceof Reject ? error.message.split(':')[0] : 'server_error', error_description: (error as Error).message }
          : googleErrorBody(status, (error as Error).message);
        if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const fake: FakeGoogle = {
    url,
    tokenUri: `${url}/token`,
    requests: [],
    get exchanges() {
      return exchanges;
    },
    issuedTokens: [],
    options,
    script: (...added) => void steps.push(...added),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return fake;
}

// ---------------------------------------------------------------------------------------------
// Helpers for the Google and Vertex AI tests

interface Recording {
  interactions: Array<{ request: { url: string; bodySegments: unknown[] }; response: { statusCode: number; bodySegments: unknown[] } }>;
}

/** A recorded js-genai exchange's response chunks as the SSE bytes Google sends (`\r\n\r\n` framing). */
export function recordingSse(recording: Recording, interaction = 0): string {
  return sseBody(recording.interactions[interaction].response.bodySegments);
}

/** A ProviderCall-shaped object for adapter tests; `target` is filled in by the caller. */
export function chatCall<Target>(body: Obj, target: Target, overrides: Obj = {}) {
  return {
    operation: 'chat' as const,
    body,
    stream: body.stream === true,
    target,
    forwardHeaders: {},
    requestHeaders: {},
    strictApiCompliance: true,
    ...overrides,
  };
}

/** Feeds bytes through a stream transform piece by piece; returns the parsed OpenAI events (`'[DONE]'` as is). */
export async function runTransform(transform: import('node:stream').Transform, pieces: Array<string | Buffer>): Promise<any[]> {
  let out = '';
  transform.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const ended = new Promise((resolve) => transform.on('end', resolve));
  for (const piece of pieces) transform.write(piece);
  transform.end();
  await ended;
  return out
    .split('\n\n')
    .filter(Boolean)
    .map((event) => event.replace(/^data: /, ''))
    .map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
}
