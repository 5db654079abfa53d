/**
 * The OpenAI chat format as the gateway's adapters read and write it. Requests are loosely typed
 * on purpose (unknown fields pass through); these types name what adapters map.
 * @see https://platform.openai.com/docs/api-reference/chat
 */

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

export interface FilePart {
  type: 'file';
  file: { file_id?: string; file_data?: string; filename?: string };
}

export interface AudioPart {
  type: 'input_audio';
  input_audio: { data: string; format: string };
}

export type ContentPart = TextPart | ImagePart | FilePart | AudioPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string | TextPart[]; name?: string }
  | { role: 'user'; content: string | ContentPart[]; name?: string }
  | { role: 'assistant'; content?: string | TextPart[] | null; tool_calls?: ToolCall[]; name?: string; refusal?: string | null; content_blocks?: unknown[] }
  | { role: 'tool'; content: string | TextPart[]; tool_call_id: string }
  | { role: 'function'; content: string | null; name: string };

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean; description?: string } };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  n?: number | null;
  stop?: string | string[] | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  seed?: number | null;
  user?: string;
  presence_penalty?: number | null;
  frequency_penalty?: number | null;
  thinking?: { type: string; budget_tokens?: number };
  [other: string]: unknown;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [other: string]: number | undefined };
  completion_tokens_details?: { reasoning_tokens?: number; [other: string]: number | undefined };
}

export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
  /** Thinking and text blocks, when strict API compliance is off. */
  content_blocks?: Array<
    { type: 'text'; text: string } | { type: 'thinking'; thinking: string; signature?: string } | { type: 'redacted_thinking'; data: string }
  >;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{ index: number; message: AssistantMessage; finish_reason: FinishReason | null; logprobs: null }>;
  usage?: Usage;
  system_fingerprint?: string;
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  tool_calls?: Array<{ index: number; id?: string; type?: 'function'; function: { name?: string; arguments: string } }>;
  content_blocks?: Array<{ index: number; type?: string; thinking?: string; signature?: string; text?: string; data?: string }>;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{ index: number; delta: ChunkDelta; finish_reason: FinishReason | null; logprobs?: null }>;
  usage?: Usage | null;
}
