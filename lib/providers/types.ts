import type { Transform } from 'node:stream';
import type { GatewayError } from '../core/errors';
import type { TokenUsage } from '../core/usage';

/** The unified inference operations. */
export type Operation = 'chat' | 'completions' | 'embeddings' | 'responses' | 'messages';

/** A request body on its way to the provider (a parsed JSON object the adapter may adjust). */
export type JsonObject = Record<string, unknown>;

/**
 * How a provider wants its key: the header name and the prefix before the key
 * (`Authorization: Bearer <key>` for the OpenAI family).
 */
export interface AuthScheme {
  header: string;
  prefix: string;
}

export interface Deployment {
  deployment_id: string;
  alias: string;
  api_version: string;
  is_default?: boolean;
}

/**
 * Credentials and provider-specific settings of a target (a config's or a catalog integration's):
 * the provider fields of the config object, which extends them with routing, caching and hooks.
 */
export interface ProviderSettings {
  strict_api_compliance?: boolean;
  api_key?: string;
  custom_host?: string;
  resource_name?: string;
  deployment_id?: string;
  api_version?: string;
  deployments?: Deployment[];
  cloudA_access_key_id?: string;
  cloudA_secret_access_key?: string;
  cloudA_region?: string;
  cloudA_session_token?: string;
  compat_organization?: string;
  compat_project?: string;
  cloudB_project_id?: string;
  cloudB_region?: string;
  cloudB_service_account_json?: Record<string, unknown>;
  cloudC_region?: string;
  cloudC_deployment_name?: string;
  cloudC_endpoint_name?: string;
  cloudC_api_version?: string;
  cloudC_deployment_type?: 'serverless' | 'managed';
  cloudC_resource_name?: string;
  cloudC_deployment_id?: string;
  cloudC_model_name?: string;
  cloudC_entra_scope?: string;
}

/** A provider the gateway speaks: its name, default base URL and adapter. */
export interface ProviderDefinition {
  name: string;
  /** The default base URL (documented in docs/providers.md; what `custom_host` replaces). */
  baseUrl: string;
  /** The unified operations it serves; any other is refused with one 400 (`capabilities.ts`). */
  operations: readonly Operation[];
  /**
   * The base URL for a target's settings, for providers whose host depends on them (a region, a
   * project, a resource name). Throws a 400 GatewayError naming the missing setting.
   */
  baseUrlFor?(settings: ProviderSettings): string;
  /**
   * Where a resource-level API the workers call (files, batches, fine-tuning jobs) lies under the
   * base URL, for providers that address it their own way; OpenAI's paths as they are otherwise.
   */
  resourceApiPath?(settings: ProviderSettings, path: string): { path: string; query: string };
  adapter: ProviderAdapter;
}

/** Where one attempt goes: the provider, the base URL in use and the credentials. */
export interface ResolvedTarget {
  provider: ProviderDefinition;
  baseUrl: string;
  settings: ProviderSettings;
}

/** One OpenAI-format request for a provider. */
export interface ProviderCall {
  operation: Operation;
  body: JsonObject;
  /** The client's bytes, set only while `body` is exactly what the client sent. */
  clientBytes?: Buffer;
  stream: boolean;
  target: ResolvedTarget;
  /** Request headers the client asked to forward unchanged. */
  forwardHeaders: Record<string, string>;
  /** All request headers (lower-case names), for provider headers such as `anthropic-beta`. */
  requestHeaders: Record<string, string>;
  strictApiCompliance: boolean;
  /** For `responses`: the earlier response this one continues, as its provider may know it. */
  responsesChain?: ResponsesChain;
}

/* How a Responses call continues an earlier response: see responses-format/chain.ts. */

/** Where and with what credential a response was made natively: what the provider's own id is valid for. */
export interface NativeResponseLink {
  /** The provider's own id of the response (`resp_…` at OpenAI). */
  providerResponseId: string;
  provider: string;
  baseUrl: string;
  /** {@link credentialFingerprint} of the credential it was made with: a hash, never the key. */
  credential: string;
}

export interface ResponsesChain {
  /** Set when the earlier response was made natively and stored at its provider. */
  link?: NativeResponseLink;
  /** How many leading items of the body's `input` are the earlier conversation (the rest are new). */
  historyLength: number;
}

/** The HTTP request an adapter builds for a call, and how to read what comes back. */
export interface PreparedCall {
  url: URL;
  headers: Record<string, string>;
  body: Buffer | string;
  /**
   * A provider error response in the gateway's error shape. `headers` are the provider's, for
   * adapters that read facts from them (Bedrock names its exception there); they are not copied into
   * the error.
   */
  readError(status: number, body: Buffer, headers: Record<string, string>): GatewayError;
  /** A complete provider response as an OpenAI-format body, with its token usage. */
  readResponse(body: Buffer): { body: Buffer | string; usage?: TokenUsage };
  /** Provider stream bytes in, OpenAI-format SSE bytes out. */
  streamTransform(onUsage: (usage: TokenUsage) => void): Transform;
  /**
   * The media type of the provider's stream (`text/event-stream` when not given). A streamed call
   * answered 2xx with any other type is a provider error, decided before the stream is committed.
   */
  streamContentType?: string;
}

/** A request passed through to the provider as the client sent it. */
export interface RawRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: Buffer;
}

/** Translates between the OpenAI format and one provider's wire format. */
export interface ProviderAdapter {
  prepare(call: ProviderCall): PreparedCall | Promise<PreparedCall>;
  /** The headers that authenticate a pass-through request (a key header, or a signature). */
  authenticate(request: RawRequest, target: ResolvedTarget): Record<string, string> | Promise<Record<string, string>>;
}
