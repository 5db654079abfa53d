import type { ResponsesChain } from '../providers/responses-format/chain';
import type { JsonObject, Operation } from '../providers/types';
import type { ConfigSource } from './request-config';
import type { ProviderCredentials } from './target';
import { validateInferenceBody } from './validate';

/** Whose request it is: the workspace decides which configs, catalog entries and breaker states it sees. */
export interface InferenceCaller {
  organisationId: string;
  workspaceId: string;
  keyId?: string;
}

/** The gateway's options for one request (over HTTP, its `x-gateway-*` headers), read once. */
export interface InferenceOptions {
  config: ConfigSource;
  /** The provider, key, host and cloud settings named outside a config; targets fall back on them. */
  credentials: ProviderCredentials;
  /** Wins over every target's `request_timeout`. */
  timeoutMs?: number;
  /** Client headers to send on to the provider as they are. */
  forwardHeaderNames: readonly string[];
  cache: CacheOptions;
  /** The request's `strict_api_compliance`, for targets whose config does not set it. */
  strictApiCompliance?: boolean;
}

/** How the request wants the cache used, where a config turns it on. */
export interface CacheOptions {
  /** Partitions the cache by this string alone (metadata and credentials no longer split it). */
  namespace?: string;
  /** Skip the lookup, call the provider, and store its answer over the old one. */
  forceRefresh: boolean;
}

export interface InferenceFields {
  caller: InferenceCaller;
  options: InferenceOptions;
  /** What conditional routing reads as `metadata`, and the log keeps. */
  metadata: Record<string, unknown>;
  /** The path conditional routing reads as `url.pathname`. */
  path: string;
  /**
   * The client's headers (lower-case names): forwarded by name, and read by the adapters of
   * providers with headers of their own (`anthropic-beta`, `extra-parameters`). Empty for work that
   * did not come over HTTP.
   */
  headers: Record<string, string>;
  /** The prompt template a prompt run renders: what rate-limit policies on `prompt` match. */
  promptId?: string;
}

/** A chat completion, text completion or embeddings request in OpenAI's format. */
export interface UnifiedRequest extends InferenceFields {
  kind: 'unified';
  operation: Operation;
  body: JsonObject;
  /** The body's bytes as the client sent them, reused for providers that take the body unchanged. */
  clientBytes?: Buffer;
  stream: boolean;
  /** A Responses request that continues an earlier response: what its provider may hold of it. */
  responsesChain?: ResponsesChain;
}

/** A provider's own API, called with the client's method, path, query and bytes. */
export interface PassthroughRequest extends InferenceFields {
  kind: 'passthrough';
  method: string;
  /** The provider-relative path, checked and encoded for the wire. */
  providerPath: string;
  rawQuery: string;
  bytes?: Buffer;
}

/**
 * One inference request, whatever carried it: a live HTTP route (`fromHttp`), a prompt run or a
 * worker. Nothing in it refers to the transport, so `runInference` can serve them all.
 */
export type InferenceRequest = UnifiedRequest | PassthroughRequest;

/** The route a unified operation stands for: what conditional routing reads as `url.pathname`. */
const operationPaths: Record<Operation, string> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
  embeddings: '/v1/embeddings',
  responses: '/v1/responses',
  messages: '/v1/messages',
};

/** What a caller must say of a request; the rest has the defaults of a request that named nothing. */
type RequestInput<Request extends InferenceRequest> = Omit<Request, 'options' | 'metadata' | 'path' | 'headers' | 'stream'> & {
  options?: Partial<InferenceOptions>;
  metadata?: Record<string, unknown>;
  path?: string;
  headers?: Record<string, string>;
};

/**
 * The one way to make an inference request, for a route, a prompt run and a worker alike: a
 * unified body is validated (a 400 naming the field), and what the caller leaves out gets the
 * defaults of a request that named nothing (no config, no credentials, no forwarded headers, the
 * cache as configured, no metadata, the operation's path, no client headers).
 */
export function inferenceRequest(input: RequestInput<UnifiedRequest>): UnifiedRequest;
export function inferenceRequest(input: RequestInput<PassthroughRequest>): PassthroughRequest;
export function inferenceRequest(input: RequestInput<UnifiedRequest> | RequestInput<PassthroughRequest>): InferenceRequest {
  const options: InferenceOptions = { config: { kind: 'headers' }, credentials: {}, forwardHeaderNames: [], cache: { forceRefresh: false }, ...input.options };
  const common = { metadata: input.metadata ?? {}, headers: input.headers ?? {}, options };
  if (input.kind === 'passthrough') return { ...input, ...common, path: input.path ?? `/v1/${input.providerPath}` };
  validateInferenceBody(input.operation, input.body);
  return { ...input, ...common, stream: input.body.stream === true, path: input.path ?? operationPaths[input.operation] };
}
