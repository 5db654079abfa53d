/**
 * Bedrock Runtime wire types: Converse / ConverseStream (API version 2023-09-30) and the InvokeModel
 * bodies of the embedding models the gateway maps. Only the fields the adapter reads or writes.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
 */

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';
export type DocumentFormat = 'pdf' | 'csv' | 'doc' | 'docx' | 'xls' | 'xlsx' | 'html' | 'txt' | 'md';

/** Bytes travel base64-encoded in JSON; S3 objects by URI (the caller's role must be able to read them). */
export type MediaSource = { bytes: string } | { s3Location: { uri: string; bucketOwner?: string } };

export interface ToolUse {
  toolUseId: string;
  name: string;
  input: unknown;
}

export interface ToolResult {
  toolUseId: string;
  content: Array<{ text: string } | { json: unknown }>;
  status?: 'success' | 'error';
}

export interface ReasoningContent {
  reasoningText?: { text: string; signature?: string };
  /** Base64 in JSON. */
  redactedContent?: string;
}

/** A union: exactly one key per block. */
export type ContentBlock =
  | { text: string }
  | { image: { format: ImageFormat; source: MediaSource } }
  | { document: { format: DocumentFormat; name: string; source: MediaSource } }
  | { toolUse: ToolUse }
  | { toolResult: ToolResult }
  | { reasoningContent: ReasoningContent }
  | { cachePoint: { type: 'default' } };

export type SystemBlock = { text: string } | { cachePoint: { type: 'default' } };

export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface ToolSpec {
  name: string;
  description?: string;
  inputSchema: { json: Record<string, unknown> };
}

export type ToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ToolConfig {
  tools: Array<{ toolSpec: ToolSpec }>;
  toolChoice?: ToolChoice;
}

export interface InferenceConfig {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
}

export interface ConverseRequest {
  messages: Message[];
  system?: SystemBlock[];
  inferenceConfig?: InferenceConfig;
  toolConfig?: ToolConfig;
  additionalModelRequestFields?: Record<string, unknown>;
  guardrailConfig?: Record<string, unknown>;
  performanceConfig?: Record<string, unknown>;
  requestMetadata?: Record<string, string>;
  additionalModelResponseFieldPaths?: string[];
  promptVariables?: Record<string, unknown>;
}

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'guardrail_intervened'
  | 'content_filtered'
  | 'malformed_model_output'
  | 'malformed_tool_use'
  | 'model_context_window_exceeded';

export interface BedrockUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  /** Reported apart from `inputTokens` (which counts only the uncached part of the prompt). */
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output?: { message?: { role: 'assistant'; content?: ContentBlock[] } };
  stopReason?: StopReason | string;
  usage?: BedrockUsage;
  metrics?: { latencyMs?: number };
}

/** ConverseStream event payloads (`:event-type` names the member; the payload is the member itself). */
export interface ContentBlockStartEvent {
  contentBlockIndex: number;
  start?: { toolUse?: { toolUseId: string; name: string } };
}

export interface ContentBlockDeltaEvent {
  contentBlockIndex: number;
  delta?: {
    text?: string;
    toolUse?: { input?: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  };
}

export interface MessageStopEvent {
  stopReason?: StopReason | string;
}

export interface MetadataEvent {
  usage?: BedrockUsage;
}

/**
 * Titan Text Embeddings (one text per call).
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html
 */
export interface TitanEmbeddingRequest {
  inputText: string;
  dimensions?: number;
  normalize?: boolean;
}

export interface TitanEmbeddingResponse {
  embedding?: number[];
  inputTextTokenCount?: number;
}

/**
 * Cohere Embed (up to 96 texts per call).
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html
 */
export interface CohereEmbeddingRequest {
  texts: string[];
  input_type: string;
  truncate?: string;
  output_dimension?: number;
}

export interface CohereEmbeddingResponse {
  /** A list of vectors, or `{ float: [...] }` when embedding types were asked for (Embed v4 always). */
  embeddings?: number[][] | { float?: number[][] };
  meta?: { billed_units?: { input_tokens?: number } };
}
