/**
 * A fake AWS Bedrock Runtime over real HTTP (node:http on loopback).
 *
 * Every request must be authenticated the way Bedrock checks it: a SigV4 signature (service
 * `bedrock`, the fake's region) that the fake recomputes with `@smithy/signature-v4` from the known
 * secret — over the path exactly as received (so a model id's `%3A` is signed as `%253A`), the
 * signed headers, the query and the body — with `x-amz-date` within 5 minutes and the session token
 * when one is configured; or `Authorization: Bearer <apiKey>` when the fake has an API key. Anything
 * else gets 403 with Bedrock's error shape (`x-amzn-ErrorType` header, `{"message"}` body).
 *
 * Routes (after any base path): `POST …/model/{modelId}/converse`, `…/converse-stream` (the binary
 * `application/vnd.amazon.eventstream`, frames encoded with `@smithy/eventstream-codec`, payloads
 * padded with a `"p"` field like the real service) and `…/invoke` (Titan/Cohere embeddings);
 * `GET …/assets/pixel.png` serves a 1×1 PNG for remote-image tests.
 *
 * The Converse body is checked like Bedrock does and a violation is a 400 ValidationException: only
 * Converse fields; user/assistant turns that alternate and start with the user; one key per content
 * block, no blank text; a toolConfig whenever toolUse/toolResult blocks appear; every toolResult
 * answering a toolUse of the turn before; no `x-gateway-*` header leaked.
 *
 * Answers, unless `script()` queued one: model `error-<status>` → that status with the matching
 * exception; a last user turn of tool results → text quoting them; a toolConfig with a forced choice
 * or "call a tool" in the last user text → a toolUse of the chosen (or first) tool; otherwise
 * "echo: <last user text>".
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

export interface FakeBedrockOptions {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region: string;
  /** Also accept `Authorization: Bearer <apiKey>` (a Bedrock API key). */
  apiKey?: string;
}

export interface BedrockRequestRecord {
  method: string;
  /** Path and query exactly as received. */
  path: string;
  /** The model id, decoded from its path segment. */
  modelId: string;
  action: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json: any;
  /** How the request authenticated (only recorded when it did). */
  auth: 'sigv4' | 'bearer';
}

/** One ConverseStream frame: an event, or an exception that ends the stream. */
export type FakeStreamFrame = { event: string; payload: Record<string, unknown> } | { exception: string; payload: Record<string, unknown> };

export type BedrockStep =
  | { status?: number; json: unknown; headers?: Record<string, string> }
  | { error: string; status: number; message: string }
  | {
      frames: FakeStreamFrame[];
      /** Write the whole encoded stream in pieces of this many bytes (default: one write per frame). */
      splitEvery?: number;
      /** Flip a payload byte of this frame (its message CRC then fails). */
      corruptFrame?: number;
      /** Destroy the socket after this many frames. */
      breakAfter?: number;
    };

export interface FakeBedrock {
  url: string;
  requests: BedrockRequestRecord[];
  script(...steps: BedrockStep[]): void;
  /** Drops steps a test queued but did not use, so they cannot leak into the next test. */
  reset(): void;
  close(): Promise<void>;
}

const converseFields = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'promptVariables',
  'additionalModelResponseFieldPaths',
  'requestMetadata',
  'performanceConfig',
]);
const inferenceFields = new Set(['maxTokens', 'temperature', 'topP', 'stopSequences']);
const blockKeys = new Set(['text', 'image', 'document', 'video', 'toolUse', 'toolResult', 'guardContent', 'cachePoint', 'reasoningContent']);
const exceptionsByStatus: Record<number, string> = {
  400: 'ValidationException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};
const signatureMismatch =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';
/** A 1×1 transparent PNG. */
export const pixelPng = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

const codec = new EventStreamCodec(toUtf8, fromUtf8);
class Sha256 extends Hash {
  constructor(secret?: ConstructorParameters<typeof Hash>[1]) {
    super('sha256', secret);
  }
}
const padding = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** One event-stream frame as Bedrock writes it. */
export function encodeFrame(frame: FakeStreamFrame): Buffer {
  const isEvent = 'event' in frame;
  const headers = {
    [isEvent ? ':event-type' : ':exception-type']: { type: 'string' as const, value: isEvent ? frame.event : frame.exception },
    ':content-type': { type: 'string' as const, value: 'application/json' },
    ':message-type': { type: 'string' as const, value: isEvent ? 'event' : 'exception' },
  };
  const payload = isEvent ? { ...frame.payload, p: padding.slice(0, 1 + (JSON.stringify(frame.payload).length % padding.length)) } : frame.payload;
  return Buffer.from(codec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) }));
}

/** What Bedrock would reject in a Converse body, as messages (empty when it is acceptable). */
export function checkConverseRequest(body: any): string[] {
  const problems: string[] = [];
  if (!body || typeof body !== 'object' || Array.isArray(body)) return ['Malformed input request: body must be a JSON object'];
  for (const key of Object.keys(body)) if (!converseFields.has(key)) problems.push(`Malformed input request: extraneous key [${key}] is not permitted`);
  for (const key of Object.keys(body.inferenceConfig ?? {})) if (!inferenceFields.has(key)) problems.push(`inferenceConfig: extraneous key [${key}]`);
  if (!Array.isArray(body.messages) || body.messages.length === 0) return [...problems, 'messages: at least one message is required'];
  let toolBlocks = false;
  body.messages.forEach((message: any, index: number) => {
    const where = `messages.${index}`;
    if (message?.role !== 'user' && message?.role !== 'assistant') problems.push(`${where}.role must be user or assistant`);
    if (index === 0 && message?.role !== 'user') problems.push('A conversation must start with a user message.');
    if (index > 0 && message?.role === body.messages[index - 1]?.role) problems.push('A conversation must alternate between user and assistant roles.');
    if (!Array.isArray(message?.content) || message.content.length === 0) return problems.push(`${where}.content must be a non-empty list`);
    const previousToolUses = new Set<string>(
      (body.messages[index - 1]?.content ?? []).filter((block: any) => block?.toolUse).map((block: any) => block.toolUse.toolUseId),
    );
    message.content.forEach((block: any, blockIndex: number) => {
      const keys = Object.keys(block ?? {});
      if (keys.length !== 1 || !blockKeys.has(keys[0]))
        problems.push(`${where}.content.${blockIndex} must have exactly one known member; got ${keys.join(',')}`);
      if ('text' in (block ?? {}) && (typeof block.text !== 'string' || !block.text.trim()))
        problems.push(`The text field in the ContentBlock object at ${where}.content.${blockIndex} is blank.`);
      if (block?.toolUse) {
        toolBlocks = true;
        if (
          message.role !== 'assistant' ||
          typeof block.toolUse.toolUseId !== 'string' ||
          typeof block.toolUse.name !== 'string' ||
          typeof block.toolUse.input !== 'object'
        )
          problems.push(`${where}: malformed toolUse`);
      }
      if (block?.toolResult) {
        toolBlocks = true;
        if (message.role !== 'user' || !previousToolUses.has(block.toolResult.toolUseId))
          problems.push(`${where}: toolResult ${block.toolResult.toolUseId} does not answer a toolUse of the previous turn`);
        if (!Array.isArray(block.toolResult.content)) problems.push(`${where}: toolResult.content must be a list`);
      }
      if (block?.image && (!['png', 'jpeg', 'gif', 'webp'].includes(block.image.format) || !(block.image.source?.bytes || block.image.source?.s3Location)))
        problems.push(`${where}: malformed image`);
    });
  });
  if (toolBlocks && !body.toolConfig) problems.push('The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  for (const tool of body.toolConfig?.tools ?? []) {
    if (!tool?.toolSpec?.name || typeof tool.toolSpec.inputSchema?.json !== 'object')
      problems.push('toolConfig.tools: each tool needs toolSpec.name and toolSpec.inputSchema.json');
  }
  return problems;
}

/** The answer Bedrock's model would give, as Converse content blocks and a stop reason. */
function answer(body: any): { content: any[]; stopReason: string } {
  const last = body.messages.at(-1);
  const results = last.content.filter((block: any) => block.toolResult);
  if (results.length > 0) {
    const quoted = results.map((block: any) => block.toolResult.content.map((part: any) => part.text ?? JSON.stringify(part.json)).join('')).join(' | ');
    return { content: [{ text: `tool said: ${quoted}` }], stopReason: 'end_turn' };
  }
  const text = last.content
    .filter((block: any) => typeof block.text === 'string')
    .map((block: any) => block.text)
    .join(' ');
  const tools = body.toolConfig?.tools ?? [];
  const choice = body.toolConfig?.toolChoice;
  if (tools.length > 0 && (choice?.any || choice?.tool || /call a tool/i.test(text))) {
    const spec = (choice?.tool ? tools.find((tool: any) => tool.toolSpec.name === choice.tool.name) : tools[0]).toolSpec;
    const input = Object.fromEntries(Object.keys(spec.inputSchema.json.properties ?? {}).map((key) => [key, 'example']));
    return {
      content: [{ text: 'Let me check.' }, { toolUse: { toolUseId: `tooluse_fake${Date.now().toString(36)}`, name: spec.name, input } }],
      stopReason: 'tool_use',
    };
  }
  return { content: [{ text: `echo: ${text}` }], stopReason: 'end_turn' };
}

/** The ConverseStream frames of an answer: text in two deltas, tool input in two fragments. */
function framesOf(content: any[], stopReason: string): FakeStreamFrame[] {
  const frames: FakeStreamFrame[] = [{ event: 'messageStart', payload: { role: 'assistant' } }];
  content.forEach((block, contentBlockIndex) => {
    if (block.text !== undefined) {
      const half = Math.ceil(block.text.length / 2);
      for (const text of [block.text.slice(0, half), block.text.slice(half)])
        frames.push({ event: 'contentBlockDelta', payload: { contentBlockIndex, delta: { text } } });
    } else {
      frames.push({
        event: 'contentBlockStart',
        payload: { contentBlockIndex, start: { toolUse: { toolUseId: block.toolUse.toolUseId, name: block.toolUse.name } } },
      });
      const input = JSON.stringify(block.toolUse.input);
      const half = Math.ceil(input.length / 2);
      for (const fragment of [input.slice(0, half), input.slice(half)])
        frames.push({ event: 'contentBlockDelta', payload: { contentBlockIndex, delta: { toolUse: { input: fragment } } } });
    }
    frames.push({ event: 'contentBlockStop', payload: { contentBlockIndex } });
  });
  frames.push(
    { event: 'messageStop', payload: { stopReason } },
    { event: 'metadata', payload: { usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 }, metrics: { latencyMs: 42 } } },
  );
  return frames;
}

function parseAmzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return match ? new Date(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}Z`) : undefined;
}

/** `undefined` when the request is authentic, else the exception name and message Bedrock would answer. */
export async function verifyAuth(
  options: FakeBedrockOptions,
  method: string,
  rawPath: string,
  headers: IncomingMessage['headers'],
  body: Buffer,
): Promise<{ auth: 'sigv4' | 'bearer' } | { error: string; message: string }> {
  const authorization = headers.authorization ?? '';
  if (options.apiKey && authorization === `Bearer ${options.apiKey}`) return { auth: 'bearer' };
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(
    String(authorization),
  );
  if (!match) return { error: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const [, keyId, scopeDate, region, service, signedList] = match;
  if (keyId !== options.accessKeyId) return { error: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (service !== 'bedrock' || region !== options.region)
    return { error: 'InvalidSignatureException', message: `Credential should be scoped to a valid region and service 'bedrock'; got ${region}/${service}.` };
  const date = parseAmzDate(String(headers['x-amz-date'] ?? ''));
  if (!date || !String(headers['x-amz-date']).startsWith(scopeDate) || Math.abs(Date.now() - date.getTime()) > 5 * 60_000)
    return { error: 'InvalidSignatureException', message: 'Signature expired or x-amz-date missing.' };
  if (options.sessionToken && headers['x-amz-security-token'] !== options.sessionToken)
    return { error: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  const signedNames = signedList.split(';');
  if (!signedNames.includes('host') || !signedNames.includes('x-amz-date'))
    return { error: 'InvalidSignatureException', message: 'host and x-amz-date must be signed.' };
  const signed: Record<string, string> = {};
  for (const name of signedNames) {
    const value = headers[name];
    if (value === undefined) return { error: 'InvalidSignatureException', message: `Signed header ${name} is missing.` };
    signed[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const [path, rawQuery = ''] = rawPath.split('?');
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(rawQuery)) query[key] = key in query ? [query[key]].flat().concat(value) : value;
  const signer = new SignatureV4({
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey, sessionToken: options.sessionToken },
    region,
    service,
    sha256: Sha256,
    applyChecksum: false,
  });
  const expected = await signer.sign(
    { method, protocol: 'http:', hostname: signed.host, path, query, headers: signed, body: body.length ? body : undefined },
    { signingDate: date },
  );
  if (expected.headers.authorization !== authorization) return { error: 'InvalidSignatureException', message: signatureMismatch };
  return { auth: 'sigv4' };
}

export async function startFakeBedrock(options: FakeBedrockOptions): Promise<FakeBedrock> {
  const requests: BedrockRequestRecord[] = [];
  const queue: BedrockStep[] = [];

  const sendError = (res: ServerResponse, status: number, name: string, message: string) => {
    const text = JSON.stringify({ message });
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': crypto.randomUUID(),
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };
  const sendJson = (res: ServerResponse, status: number, json: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(json);
    res.writeHead(status, {
      'content-type': 'application/json',
      'x-amzn-requestid': crypto.randomUUID(),
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };

  async function sendFrames(res: ServerResponse, step: Extract<BedrockStep, { frames: unknown }>): Promise<void> {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': crypto.randomUUID() });
    const encoded = step.frames.map((frame, index) => {
      const bytes = encodeFrame(frame);
      if (index === step.corruptFrame) bytes[bytes.length - 6] ^= 0xff;
      return bytes;
    });
    const frames = step.breakAfter !== undefined ? encoded.slice(0, step.breakAfter) : encoded;
    const pieces: Buffer[] = [];
    if (step.splitEvery) {
      const all = Buffer.concat(frames);
      for (let offset = 0; offset < all.length; offset += step.splitEvery) pieces.push(all.subarray(offset, offset + step.splitEvery));
    } else pieces.push(...frames);
    for (const piece of pieces) {
      res.write(piece);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (step.breakAfter !== undefined) res.socket?.destroy();
    else res.end();
  }

  const server = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const rawPath = req.url ?? '/';
      if (req.method === 'GET' && rawPath.endsWith('/assets/pixel.png')) {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': pixelPng.length });
        return res.end(pixelPng);
      }
      const verified = await verifyAuth(options, req.method ?? 'GET', rawPath, req.headers, body);
      if ('error' in verified) return sendError(res, 403, verified.error, verified.message);
      const route = /\/model\/([^/?]+)\/(converse|converse-stream|invoke)(?:\?|$)/.exec(rawPath);
      if (req.method !== 'POST' || !route) return sendError(res, 404, 'UnknownOperationException', `No operation at ${req.method} ${rawPath}`);
      let json: any;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        return sendError(res, 400, 'ValidationException', 'Malformed input request, please reformat your input and try again.');
      }
      const record: BedrockRequestRecord = {
        method: req.method,
        path: rawPath,
        modelId: decodeURIComponent(route[1]),
        action: route[2],
        headers: req.headers,
        body,
        json,
        auth: verified.auth,
      };
      requests.push(record);
      if (Object.keys(req.headers).some((name) => name.startsWith('x-gateway-')))
        return sendError(res, 400, 'ValidationException', 'x-gateway-* headers leaked to the provider');
      if (!String(req.headers['content-type'] ?? '').startsWith('application/json'))
        return sendError(res, 400, 'ValidationException', 'content-type must be application/json');

      if (record.action !== 'invoke') {
        const problems = checkConverseRequest(json);
        if (problems.length) return sendError(res, 400, 'ValidationException', problems.join(' '));
      }
      const step = queue.shift();
      if (step) {
        if ('error' in step) return sendError(res, step.status, step.error, step.message);
        if ('json' in step) return sendJson(res, step.status ?? 200, step.json, step.headers);
        return sendFrames(res, step);
      }
      const failing = /^error-(\d{3})$/.exec(record.modelId);
      if (failing) {
        const status = Number(failing[1]);
        return sendError(
          res,
          status,
          exceptionsByStatus[status] ?? 'InternalServerException',
          status === 429 ? 'Too many requests, please wait before trying again.' : `Fake Bedrock error ${status}.`,
        );
      }
      if (record.action === 'invoke') return sendJson(res, 200, embeddingAnswer(json));
      const { content, stopReason } = answer(json);
      if (record.action === 'converse-stream') return sendFrames(res, { frames: framesOf(content, stopReason) });
      return sendJson(res, 200, {
        output: { message: { role: 'assistant', content } },
        stopReason,
        usage: { inputTokens: 11, outputTokens: 7, totalTokens: 18 },
        metrics: { latencyMs: 42 },
      });
    } catch (error) {
      if (!res.headersSent) sendError(res, 500, 'InternalServerException', (error as Error).message);
      else res.destroy();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...steps) => queue.push(...steps),
    reset: () => queue.splice(0),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Titan (`inputText`) or Cohere (`texts`) embeddings of 4 dimensions, derived from the text length. */
function embeddingAnswer(json: any): unknown {
  const vector = (text: string) => [text.length / 100, 0.25, -0.5, 0.125];
  if (typeof json.inputText === 'string') return { embedding: vector(json.inputText), inputTextTokenCount: Math.ceil(json.inputText.length / 4) };
  return { embeddings: (json.texts ?? []).map(vector), id: 'fake-embed', response_type: 'embeddings_floats', texts: json.texts };
}
