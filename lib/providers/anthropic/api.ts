/**
 * The Anthropic Messages API as the adapter writes and reads it: only the fields the mapping uses.
 * Plain types, no runtime schemas, so the Lambda bundle stays small; responses are read defensively.
 * @see https://docs.anthropic.com/en/api/messages
 * @see https://docs.anthropic.com/en/api/messages-streaming
 */

export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export interface ImageBlock {
  type: 'image';
  source: ImageSource;
  cache_control?: CacheControl;
}

/** PDFs as base64 or URL, plain text inline, or a file uploaded with Anthropic's Files API (beta). */
export type DocumentSource =
  | { type: 'base64'; media_type: 'application/pdf'; data: string }
  | { type: 'text'; media_type: 'text/plain'; data: string }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface DocumentBlock {
  type: 'document';
  source: DocumentSource;
  title?: string;
  cache_control?: CacheControl;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export type RequestBlock = TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | RedactedThinkingBlock;

export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | RequestBlock[];
}

export interface ToolDefinition {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type ToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type ThinkingConfig =
  | { type: 'enabled'; budget_tokens: number }
  | { type: 'disabled' }
  | { type: 'adaptive' }
  | { type: string; budget_tokens?: number };

/**
 * A Messages request body without `model`: Anthropic's own API wants `model` in the body, Claude on
 * Vertex AI names the model in the URL and wants `anthropic_version` in the body instead.
 */
export interface MessagesBody {
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id: string };
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  thinking?: ThinkingConfig;
  stream?: boolean;
}

/** Response content blocks; server-tool blocks (web search…) have other types and are skipped. */
export type ResponseBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock | { type: string };

export interface MessagesUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export interface MessageResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ResponseBlock[];
  stop_reason: StopReason | string | null;
  stop_sequence?: string | null;
  usage?: MessagesUsage;
}

export interface ErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id?: string;
}

/** The `data` of each named stream event (the event name repeats `type`). */
export type StreamEvent =
  | { type: 'message_start'; message: MessageResponse }
  | { type: 'content_block_start'; index: number; content_block: ResponseBlock }
  | { type: 'content_block_delta'; index: number; delta: StreamDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason?: string | null; stop_sequence?: string | null }; usage?: MessagesUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | ErrorBody;

export type StreamDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string }
  | { type: string };
