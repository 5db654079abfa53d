import { isPlainObject } from '../core/plain-object';
import { eventData, eventName } from '../wire/sse';
import { BoundedEventReader } from './bounded-event-reader';

type Json = Record<string, unknown>;

/** A content block being put together, with the JSON of a tool input as its fragments arrive. */
interface BlockState {
  block: Json;
  inputJson?: string;
}

/**
 * Puts an Anthropic Messages event stream back together as the message a non-streamed request
 * would have got: `message_start` gives the message, each block is started, grown by its deltas
 * (text, thinking, signature, tool input JSON) and stopped, `message_delta` sets the stop reason and
 * the usage, and `message_stop` ends it. A stream that ends otherwise (an `error` event, cut short)
 * has no answer. Text beyond `limit` characters gives up, so an endless answer is never held.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/streaming
 */
export class MessageAssembler extends BoundedEventReader {
  private message: Json | undefined;
  private readonly blocks = new Map<number, BlockState>();
  private stopped = false;
  private size = 0;

  /** The message the stream carried, or undefined. */
  end(): Json | undefined {
    this.readRest();
    return this.failed || !this.stopped ? undefined : this.message;
  }

  protected dropHeld(): void {
    this.message = undefined;
    this.blocks.clear();
  }

  protected event(event: string): void {
    if (this.failed || this.stopped) return;
    const name = eventName(event);
    if (name === 'ping') return;
    if (name === 'error') return this.fail();
    const data = eventData(event);
    if (data === undefined) return;
    this.size += data.length;
    if (this.size > this.limit) return this.fail();
    const parsed: unknown = JSON.parse(data);
    if (!isPlainObject(parsed)) return this.fail();
    this.apply(parsed);
  }

  private apply(event: Json): void {
    const message = this.message;
    if (event.type === 'message_start') {
      if (!isPlainObject(event.message)) return this.fail();
      this.message = { ...event.message, content: [] };
      return;
    }
    if (!message) return this.fail();
    const index = typeof event.index === 'number' ? event.index : -1;
    switch (event.type) {
      case 'content_block_start': {
        const content = message.content as Json[];
        // Blocks are numbered in order from 0; any other number is no message to keep.
        if (!isPlainObject(event.content_block) || index !== content.length) return this.fail();
        const block = { ...event.content_block };
        content.push(block);
        this.blocks.set(index, { block });
        return;
      }
      case 'content_block_delta':
        return this.delta(this.blocks.get(index), event.delta);
      case 'content_block_stop': {
        const state = this.blocks.get(index);
        if (state?.inputJson !== undefined) state.block.input = state.inputJson.trim() ? JSON.parse(state.inputJson) : {};
        return;
      }
      case 'message_delta': {
        const delta = isPlainObject(event.delta) ? event.delta : {};
        for (const [key, value] of Object.entries(delta)) message[key] = value;
        if (isPlainObject(event.usage)) message.usage = { ...(isPlainObject(message.usage) ? message.usage : {}), ...definedFields(event.usage) };
        return;
      }
      case 'message_stop':
        this.stopped = true;
        this.splitter = undefined;
        return;
      default:
        return;
    }
  }

  private delta(state: BlockState | undefined, delta: unknown): void {
    if (!state || !isPlainObject(delta)) return this.fail();
    const { block } = state;
    const append = (field: string, piece: unknown) => {
      block[field] = `${typeof block[field] === 'string' ? block[field] : ''}${typeof piece === 'string' ? piece : ''}`;
    };
    switch (delta.type) {
      case 'text_delta':
        return append('text', delta.text);
      case 'thinking_delta':
        return append('thinking', delta.thinking);
      case 'signature_delta':
        block.signature = delta.signature;
        return;
      case 'input_json_delta':
        state.inputJson = (state.inputJson ?? '') + (typeof delta.partial_json === 'string' ? delta.partial_json : '');
        return;
      case 'citations_delta':
        block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
        return;
      default:
        return;
    }
  }
}

function definedFields(object: Json): Json {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== null && value !== undefined));
}
