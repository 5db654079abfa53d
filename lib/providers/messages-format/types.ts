/**
 * Anthropic's Messages API as clients send it to the gateway: the request with its `model`, and the
 * message and events it is answered with. The block and event shapes are the ones the anthropic
 * adapter already writes and reads (../anthropic/api.ts).
 * @see https://docs.anthropic.com/en/api/messages
 */
import type { MessageResponse, MessagesBody, MessagesUsage, ResponseBlock, StopReason } from '../anthropic/api';

export type {
  ImageBlock,
  MessageParam,
  MessageResponse,
  MessagesUsage,
  RequestBlock,
  ResponseBlock,
  StopReason,
  TextBlock,
  ToolChoice,
  ToolDefinition,
  ToolResultBlock,
  ToolUseBlock,
} from '../anthropic/api';

/**
 * A Messages request as a client sends it. Fields the translation to chat does not read (for an
 * Anthropic target they travel as they are) are typed loosely.
 */
export interface MessagesRequest extends Omit<MessagesBody, 'tools' | 'metadata'> {
  model: string;
  metadata?: { user_id?: string | null } & Record<string, unknown>;
  /** Client tools have a name and an `input_schema`; Anthropic's own tools carry a dated `type`. */
  tools?: Array<{ name: string; type?: string; description?: string; input_schema?: Record<string, unknown> } & Record<string, unknown>>;
  [other: string]: unknown;
}

/** An answer as Anthropic sends it, with the fields every message carries. */
export interface Message extends MessageResponse {
  content: ResponseBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage & { input_tokens: number; output_tokens: number };
}
