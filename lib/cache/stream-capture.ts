import { finished, Transform, type Readable } from 'node:stream';
import { isPlainObject } from '../core/plain-object';
import { eventData } from '../wire/sse';
import { BoundedEventReader } from './bounded-event-reader';
import { MessageAssembler } from './messages-capture';
import { FinalResponseReader } from './responses-capture';
import type { StreamedOperation } from './sse-replay';

type Json = Record<string, unknown>;

/** The operations whose answers stream: chat and completions as chunks, Responses and Messages as their events. */
export type CapturedOperation = StreamedOperation | 'responses' | 'messages';

export interface CaptureOptions {
  /**
   * How many characters of answer (its texts, and an estimate for other values) are assembled
   * before giving up on caching it; the stream itself is relayed whatever its size. Default 8 Mi.
   */
  limit?: number;
}

export interface StreamCapture {
  /** The upstream's bytes, chunk for chunk. */
  stream: Readable;
  /**
   * The answer as the non-streamed request would have returned it, once the stream ended cleanly
   * (`[DONE]`, a finish reason for every choice, no error event, no broken upstream; for Responses,
   * the response of a `response.completed` or `response.incomplete` event; for Messages, the message
   * its events build up to `message_stop`); otherwise undefined.
   * Never rejects.
   */
  answer: Promise<Json | undefined>;
}

const defaultLimit = 8 * 1024 * 1024;

/**
 * Relays an OpenAI event stream unchanged while assembling the complete answer it carries, so a
 * streamed request can fill the cache. The returned stream behaves as if piped from `upstream`,
 * with destruction carried both ways: a client that goes away destroys the upstream (ending the
 * provider call), and an upstream that fails or closes early destroys the returned stream.
 */
export function captureStream(operation: CapturedOperation, upstream: Readable, options: CaptureOptions = {}): StreamCapture {
  const limit = options.limit ?? defaultLimit;
  const assembler = readerOf(operation, limit);
  // Settled by whichever comes first: the end of the upstream, or a failure on either side.
  let settle!: (answer: Json | undefined) => void;
  const answer = new Promise<Json | undefined>((resolve) => (settle = resolve));
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      assembler.push(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      settle(assembler.end());
      callback();
    },
  });
  finished(upstream, { writable: false }, (error) => {
    if (error) {
      settle(undefined);
      stream.destroy(error);
    }
  });
  stream.once('close', () => {
    settle(undefined);
    if (!upstream.readableEnded) upstream.destroy();
  });
  upstream.pipe(stream);
  return { stream, answer };
}

function readerOf(operation: CapturedOperation, limit: number): { push(chunk: Buffer): void; end(): Json | undefined } {
  if (operation === 'responses') return new FinalResponseReader(limit);
  if (operation === 'messages') return new MessageAssembler(limit);
  return new AnswerAssembler(operation, limit);
}

/** Keys whose strings name something (replaced by a later delta) rather than text (appended to). */
const namingKeys = new Set(['role', 'id', 'type', 'name']);

/** Message arrays streamed element by element, each delta naming its element by `index`. */
const indexedKeys = new Set(['tool_calls', 'content_blocks']);

/** Chunk fields that belong to the stream, not to the answer. */
const streamOnlyFields = new Set(['object', 'choices', 'error', 'obfuscation']);

interface ChoiceState {
  index: number;
  /** `message` for chat, `{ text }` for completions. */
  body: Json;
  /** Holds `logprobs` under its own name, so that it merges as a delta field does. */
  scores: Json;
  finishReason?: string;
  extras: Json;
}

/**
 * Assembles an answer from SSE bytes, merging deltas the way OpenAI's clients do: text appended,
 * names replaced, `tool_calls` and `content_blocks` merged by index, lists appended, objects merged
 * field by field, and a null never replacing a value.
 */
class AnswerAssembler extends BoundedEventReader {
  private readonly top: Json = {};
  private readonly choices = new Map<number, ChoiceState>();
  private sawDone = false;
  /** Characters held so far (see `CaptureOptions.limit`). */
  private held = 0;

  constructor(
    private readonly operation: StreamedOperation,
    limit: number,
  ) {
    super(limit);
  }

  /** The answer, or undefined when the stream did not carry a complete one. */
  end(): Json | undefined {
    this.readRest();
    if (this.failed || !this.sawDone || this.choices.size === 0) return undefined;
    try {
      return this.assemble();
    } catch {
      // Whatever the stream held, the client has had it; the cache just goes without.
      return undefined;
    }
  }

  private assemble(): Json | undefined {
    const states = [...this.choices.values()].sort((a, b) => a.index - b.index);
    if (states.some((state) => state.finishReason === undefined)) return undefined;
    const { id, created, model, usage, ...extras } = this.top;
    const answer: Json = {};
    if (id !== undefined) answer.id = id;
    answer.object = this.operation === 'chat' ? 'chat.completion' : 'text_completion';
    if (created !== undefined) answer.created = created;
    if (model !== undefined) answer.model = model;
    answer.choices = states.map((state) => (this.operation === 'chat' ? chatChoice(state) : completionChoice(state)));
    if (usage != null) answer.usage = usage;
    return Object.assign(answer, extras);
  }

  protected dropHeld(): void {
    this.choices.clear();
  }

  protected event(event: string): void {
    if (this.failed || this.sawDone) return;
    const data = eventData(event);
    if (data === undefined) return;
    if (data === '[DONE]') {
      this.sawDone = true;
      this.splitter = undefined;
      return;
    }
    const chunk: unknown = JSON.parse(data);
    if (!isPlainObject(chunk) || chunk.error != null) return this.fail();
    for (const key in chunk) if (!streamOnlyFields.has(key)) this.replace(this.top, key, chunk[key]);
    if (Array.isArray(chunk.choices)) for (const choice of chunk.choices) this.choice(choice);
    if (this.held > this.limit) this.fail();
  }

  private choice(choice: unknown): void {
    if (!isPlainObject(choice)) return;
    const index = typeof choice.index === 'number' ? choice.index : 0;
    let state = this.choices.get(index);
    if (!state) {
      state = { index, body: {}, scores: {}, extras: {} };
      this.choices.set(index, state);
    }
    // Some providers send an empty finish reason on chunks that finish nothing.
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') state.finishReason = choice.finish_reason;
    this.merge(state.scores, 'logprobs', choice.logprobs);
    if (this.operation === 'chat') {
      if (isPlainObject(choice.delta)) this.delta(state.body, choice.delta);
    } else {
      this.merge(state.body, 'text', choice.text);
    }
    for (const key in choice)
      if (!(this.operation === 'chat' ? chatChoiceFields : completionChoiceFields).has(key)) this.replace(state.extras, key, choice[key]);
  }

  private delta(message: Json, delta: Json): void {
    for (const key in delta) {
      const value = delta[key];
      if (indexedKeys.has(key) && Array.isArray(value)) this.indexed(message, key, value);
      else this.merge(message, key, value);
    }
  }

  /** Merges elements into `target[key]` by their `index` (an element without one is a new element). */
  private indexed(target: Json, key: string, parts: unknown[]): void {
    const list = Array.isArray(target[key]) ? (target[key] as Json[]) : (target[key] = []);
    for (const part of parts) {
      if (!isPlainObject(part)) continue;
      const { index, ...fields } = part;
      const position = typeof index === 'number' && Number.isInteger(index) && index >= 0 ? index : list.length;
      // An index far past the elements so far would make a sparse list: not a stream to keep.
      if (position > list.length + 1024) throw new RangeError('index out of range');
      const element = isPlainObject(list[position]) ? list[position] : (list[position] = {});
      for (const field in fields) this.merge(element, field, fields[field]);
    }
  }

  /**
   * A chunk or choice field (ids, usage, a provider's extras): the latest non-null value wins, an
   * object field by field, since providers that repeat one (Azure's content filter results) may
   * send only part of it, or nothing, in later chunks.
   */
  private replace(target: Json, key: string, value: unknown): void {
    const current = target[key];
    if (value === null && key in target) return;
    if (isPlainObject(value) && isPlainObject(current)) {
      for (const field in value) this.replace(current, field, value[field]);
      return;
    }
    this.held += size(value) - (key in target ? size(current) : 0);
    target[key] = value;
  }

  /** Merges a delta's value into `target[key]`. */
  private merge(target: Json, key: string, value: unknown): void {
    if (value === undefined) return;
    const current = target[key];
    if (value === null) {
      if (current === undefined) target[key] = null;
      return;
    }
    if (typeof value === 'string') {
      this.held += value.length;
      target[key] = typeof current === 'string' && !namingKeys.has(key) ? current + value : value;
    } else if (Array.isArray(value)) {
      this.held += size(value);
      if (Array.isArray(current)) for (const element of value) current.push(element);
      else target[key] = [...value];
    } else if (isPlainObject(value)) {
      const into = isPlainObject(current) ? current : (target[key] = {});
      for (const field in value) this.merge(into, field, value[field]);
    } else {
      target[key] = value;
    }
  }
}

const chatChoiceFields = new Set(['index', 'delta', 'message', 'logprobs', 'finish_reason']);
const completionChoiceFields = new Set(['index', 'text', 'delta', 'logprobs', 'finish_reason']);

/**
 * A chat choice as the non-streamed answer has it. `content` is null when no text came, and also
 * when the text is empty beside tool calls (OpenAI's non-streamed form of a tool-call answer, while
 * streams open such answers with `content: ''`). Elements never named by an index are dropped.
 */
function chatChoice(state: ChoiceState): Json {
  const { role, content, ...rest } = state.body;
  for (const key of indexedKeys) if (Array.isArray(rest[key])) rest[key] = (rest[key] as unknown[]).filter((element) => element !== undefined);
  const calls = Array.isArray(rest.tool_calls) && rest.tool_calls.length > 0;
  const message: Json = { role: role ?? 'assistant', content: content === undefined || (content === '' && calls) ? null : content, ...rest };
  return { index: state.index, message, logprobs: state.scores.logprobs ?? null, finish_reason: state.finishReason, ...state.extras };
}

function completionChoice(state: ChoiceState): Json {
  return { text: state.body.text ?? '', index: state.index, logprobs: state.scores.logprobs ?? null, finish_reason: state.finishReason, ...state.extras };
}

/** Roughly how many characters a value holds, without serialising it. */
function size(value: unknown): number {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) {
    let total = 2;
    for (const element of value) total += size(element) + 1;
    return total;
  }
  if (isPlainObject(value)) {
    let total = 2;
    for (const key in value) total += key.length + size(value[key]) + 4;
    return total;
  }
  return 8;
}
