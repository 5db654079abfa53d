/**
 * OpenAI's Responses API as the gateway reads and writes it: the create request, the items of a
 * conversation, and the response object. Requests are loosely typed on purpose (a field the gateway
 * does not map is echoed or ignored, as OpenAI's own API does); these types name what it maps.
 * @see https://platform.openai.com/docs/api-reference/responses
 */

export interface InputTextPart {
  type: 'input_text';
  text: string;
}

export interface InputImagePart {
  type: 'input_image';
  image_url?: string | null;
  file_id?: string | null;
  detail?: 'auto' | 'low' | 'high';
}

export interface InputFilePart {
  type: 'input_file';
  file_id?: string | null;
  file_data?: string;
  filename?: string;
  file_url?: string;
}

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}

export interface RefusalPart {
  type: 'refusal';
  refusal: string;
}

export type InputContentPart = InputTextPart | InputImagePart | InputFilePart;

/** A message of the conversation: the client's (input parts) or the model's (output parts). */
export interface MessageItem {
  type: 'message';
  id?: string;
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | Array<InputContentPart | OutputTextPart | RefusalPart>;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: string | Array<InputContentPart>;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

export interface ReasoningItem {
  type: 'reasoning';
  id?: string;
  summary: Array<{ type: 'summary_text'; text: string }>;
  content?: Array<{ type: 'reasoning_text'; text: string }>;
  encrypted_content?: string | null;
  status?: 'in_progress' | 'completed' | 'incomplete';
}

/** Any item of a conversation; other types (built-in tool calls) are kept as they came. */
export type ConversationItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

/** The items a response produces. */
export type OutputItem =
  | (MessageItem & { id: string; role: 'assistant'; content: Array<OutputTextPart | RefusalPart> })
  | (FunctionCallItem & { id: string })
  | (ReasoningItem & { id: string });

/** A function tool in the Responses API's flat form. */
export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export type ResponsesToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; name: string } | { type: string; [other: string]: unknown };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean | null; description?: string };

/** `POST /v1/responses`, the fields the gateway maps. */
export interface ResponsesRequest {
  model: string;
  input?: string | ConversationItem[];
  instructions?: string | null;
  tools?: Array<ResponsesFunctionTool | { type: string; [other: string]: unknown }>;
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean | null;
  previous_response_id?: string | null;
  store?: boolean | null;
  stream?: boolean | null;
  background?: boolean | null;
  text?: { format?: TextFormat; verbosity?: string } | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  truncation?: 'auto' | 'disabled' | null;
  metadata?: Record<string, string> | null;
  user?: string | null;
  include?: string[] | null;
  [other: string]: unknown;
}

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'completed' | 'failed' | 'in_progress' | 'incomplete' | 'queued' | 'cancelled';

/** OpenAI's response object. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  background: boolean;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  /** The text of every output_text part, joined: what the SDKs read as `output_text`. */
  output_text: string;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number | null;
  text: { format: TextFormat };
  tool_choice: ResponsesToolChoice;
  tools: unknown[];
  top_p: number | null;
  truncation: 'auto' | 'disabled';
  usage: ResponseUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}
