/**
 * Cohere's v2 chat and embed wire formats, as far as the gateway reads and writes them.
 * @see https://docs.cohere.com/reference/chat
 * @see https://docs.cohere.com/reference/embed
 */

export type CohereContent =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'thinking'; thinking: string };

export interface CohereToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type CohereMessage =
  | { role: 'system'; content: string | Array<{ type: 'text'; text: string }> }
  | { role: 'user'; content: string | CohereContent[] }
  | { role: 'assistant'; content?: string | Array<{ type: 'text'; text: string }>; tool_plan?: string; tool_calls?: CohereToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string | Array<{ type: 'text'; text: string }> };

export interface CohereTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface CohereChatBody {
  model: string;
  messages: CohereMessage[];
  stream?: boolean;
  tools?: CohereTool[];
  strict_tools?: boolean;
  tool_choice?: 'REQUIRED' | 'NONE';
  response_format?: { type: 'text' } | { type: 'json_object'; json_schema?: Record<string, unknown> };
  max_tokens?: number;
  stop_sequences?: string[];
  temperature?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  k?: number;
  p?: number;
  thinking?: { type: 'enabled' | 'disabled'; token_budget?: number };
  [cohereOnly: string]: unknown;
}

export type CohereFinishReason = 'COMPLETE' | 'STOP_SEQUENCE' | 'MAX_TOKENS' | 'TOOL_CALL' | 'ERROR' | 'TIMEOUT';

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
  cached_tokens?: number;
}

export interface CohereChatResponse {
  id: string;
  finish_reason: CohereFinishReason | string;
  message: {
    role: 'assistant';
    content?: CohereContent[];
    tool_plan?: string;
    tool_calls?: CohereToolCall[];
    citations?: unknown[];
  };
  usage?: CohereUsage;
}

/** One stream event (the `data` of an SSE event, keyed by `type`). */
export type CohereStreamEvent =
  | { type: 'message-start'; id?: string }
  | { type: 'content-start'; index: number; delta?: { message?: { content?: { type?: string } } } }
  | { type: 'content-delta'; index: number; delta?: { message?: { content?: { text?: string; thinking?: string } } } }
  | { type: 'content-end'; index: number }
  | { type: 'tool-plan-delta'; delta?: { message?: { tool_plan?: string } } }
  | { type: 'tool-call-start'; index: number; delta?: { message?: { tool_calls?: Partial<CohereToolCall> } } }
  | { type: 'tool-call-delta'; index: number; delta?: { message?: { tool_calls?: { function?: { arguments?: string } } } } }
  | { type: 'tool-call-end'; index: number }
  | { type: 'message-end'; delta?: { finish_reason?: string; usage?: CohereUsage; error?: string } }
  | { type: 'citation-start' | 'citation-end' | 'debug' };

export interface CohereEmbedBody {
  model: string;
  texts: string[];
  input_type: string;
  embedding_types: ['float'];
  output_dimension?: number;
  truncate?: string;
}

export interface CohereEmbedResponse {
  id?: string;
  embeddings: { float?: number[][] };
  meta?: { billed_units?: { input_tokens?: number } };
}
