import { randomBytes } from 'node:crypto';
import type { GatewayError } from '../../core/errors';
import { sseData, sseDone } from '../../wire/sse';
import type { ChatCompletion, ChatCompletionChunk, ChunkDelta, FinishReason, Usage } from './types';

export function newCompletionId(): string {
  return `chatcmpl-${randomBytes(12).toString('base64url')}`;
}

export interface ChunkEmitterOptions {
  id: string;
  model: string;
  created?: number;
  /** The client asked for `stream_options.include_usage`: end with a usage-only chunk. */
  includeUsage: boolean;
  onUsage(usage: Usage): void;
  /** Receives OpenAI-format SSE text. */
  push(text: string): void;
}

/**
 * Writes an OpenAI `chat.completion.chunk` stream for an adapter that reads another format: a first
 * chunk with the role, content and tool-call deltas with stable indices, the finish reason, the
 * usage chunk when the client asked for it, and `[DONE]`; or an error event and `[DONE]`.
 */
export class ChatChunkEmitter {
  private started = false;
  private ended = false;
  private lastUsage: Usage | undefined;
  private readonly created: number;

  constructor(private readonly options: ChunkEmitterOptions) {
    this.created = options.created ?? Math.floor(Date.now() / 1000);
  }

  /** Updates the model name and id once the provider has said them (e.g. a message-start event). */
  identify(id: string | undefined, model: string | undefined): void {
    if (this.started) return;
    if (id) this.options.id = id;
    if (model) this.options.model = model;
  }

  text(content: string): void {
    if (content) this.delta({ content });
  }

  toolCallStart(index: number, id: string, name: string): void {
    this.delta({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] });
  }

  toolCallArguments(index: number, fragment: string): void {
    if (fragment) this.delta({ tool_calls: [{ index, function: { arguments: fragment } }] });
  }

  /** A thinking or other content block delta (only emitted when strict API compliance is off). */
  contentBlock(block: NonNullable<ChunkDelta['content_blocks']>[number]): void {
    this.delta({ content_blocks: [block] });
  }

  finish(reason: FinishReason): void {
    this.chunk({}, reason);
  }

  /** Records usage (the last report wins); it is sent at the end when the client asked for it. */
  usage(usage: Usage): void {
    this.lastUsage = usage;
  }

  /** Ends the stream with an OpenAI-style error event and `[DONE]`. */
  error(error: GatewayError): void {
    if (this.ended) return;
    this.ended = true;
    this.reportUsage();
    this.options.push(sseData(JSON.stringify(error.toBody())) + sseDone);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.reportUsage();
    if (this.options.includeUsage && this.lastUsage) {
      this.options.push(sseData(JSON.stringify({ ...this.base(), choices: [], usage: this.lastUsage })));
    }
    this.options.push(sseDone);
  }

  get isEnded(): boolean {
    return this.ended;
  }

  private reportUsage(): void {
    if (this.lastUsage) this.options.onUsage(this.lastUsage);
  }

  private delta(delta: ChunkDelta): void {
    this.chunk(delta, null);
  }

  private chunk(delta: ChunkDelta, finishReason: FinishReason | null): void {
    if (this.ended) return;
    if (!this.started) {
      this.started = true;
      this.write({ role: 'assistant', content: '' }, null);
    }
    this.write(delta, finishReason);
  }

  private write(delta: ChunkDelta, finishReason: FinishReason | null): void {
    const chunk: ChatCompletionChunk = { ...this.base(), choices: [{ index: 0, delta, finish_reason: finishReason }] };
    this.options.push(sseData(JSON.stringify(chunk)));
  }

  private base(): Omit<ChatCompletionChunk, 'choices'> {
    return { id: this.options.id, object: 'chat.completion.chunk', created: this.created, model: this.options.model };
  }
}

/** A complete `chat.completion` with one choice. */
export function chatCompletion(fields: {
  id?: string;
  model: string;
  message: ChatCompletion['choices'][number]['message'];
  finishReason: FinishReason | null;
  usage?: Usage;
  created?: number;
}): ChatCompletion {
  const completion: ChatCompletion = {
    id: fields.id ?? newCompletionId(),
    object: 'chat.completion',
    created: fields.created ?? Math.floor(Date.now() / 1000),
    model: fields.model,
    choices: [{ index: 0, message: fields.message, finish_reason: fields.finishReason, logprobs: null }],
  };
  if (fields.usage) completion.usage = fields.usage;
  return completion;
}
