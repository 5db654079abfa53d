import { Readable } from 'node:stream';
import { isPlainObject } from '../core/plain-object';
import { sseData, sseDone } from '../wire/sse';

type Json = Record<string, unknown>;

export type StreamedOperation = 'chat' | 'completions';

export interface ReplayOptions {
  /** The client asked for `stream_options.include_usage`: end with a usage-only chunk. */
  includeUsage: boolean;
}

/**
 * A stored complete answer (`chat.completion` or `text_completion`) as the OpenAI event stream a
 * streamed request would have received: the same chunk shapes as the gateway's own streams, text
 * cut into runs of a few tokens, and the deltas built so that concatenating them (as clients and
 * `captureStream` do) gives back the stored answer. Every chunk is its own push and all of them are
 * available at once; they are produced as the stream is read, so a long answer is never held as
 * SSE text in full.
 */
export function replayAsSse(answer: Json, operation: StreamedOperation, options: ReplayOptions): Readable {
  return readableOfEvents(replayEvents(answer, operation, options));
}

/** SSE texts as a stream, each its own push, produced as the stream is read. */
export function readableOfEvents(events: Iterator<string>): Readable {
  return new Readable({
    read() {
      for (;;) {
        const next = events.next();
        if (next.done) {
          this.push(null);
          return;
        }
        if (!this.push(next.value)) return;
      }
    },
  });
}

/** The whole replay as SSE text, for an answer small enough to hold it (a cache keeps it for the next hit). */
export function replayAsSseText(answer: Json, operation: StreamedOperation, options: ReplayOptions): string {
  let text = '';
  for (const event of replayEvents(answer, operation, options)) text += event;
  return text;
}

/** The SSE text of each event of the replay, in order, ending with `[DONE]`. */
function* replayEvents(answer: Json, operation: StreamedOperation, options: ReplayOptions): Generator<string> {
  const frame = chunkFrame(answer, operation);
  const stored = Array.isArray(answer.choices) ? answer.choices : [];
  let turns = stored.map((choice, position) => {
    const body = isPlainObject(choice) ? choice : {};
    const index = typeof body.index === 'number' ? body.index : position;
    return operation === 'chat' ? chatChoiceParts(body, index) : completionChoiceParts(body, index);
  });
  // Choices take turns, one part each, as they do when the provider generates n answers at once.
  let first = true;
  while (turns.length > 0) {
    const going: typeof turns = [];
    for (const turn of turns) {
      const next = turn.next();
      if (next.done) continue;
      going.push(turn);
      yield sseData(JSON.stringify(frame([next.value], first)));
      first = false;
    }
    turns = going;
  }
  if (options.includeUsage && isPlainObject(answer.usage)) yield sseData(JSON.stringify(frame([], first, answer.usage)));
  yield sseDone;
}

/** Fields of a stored answer that a chunk carries in a form of its own, or never. */
const framedFields = new Set(['id', 'object', 'created', 'model', 'service_tier', 'system_fingerprint', 'choices', 'usage']);

/**
 * Builds chunks in the key order OpenAI streams use for the operation. Fields of the answer that
 * streams know nothing of (a provider's extras) ride on the first chunk only, where a reader that
 * merges chunks picks them up once.
 */
function chunkFrame(answer: Json, operation: StreamedOperation): (choices: Json[], first: boolean, usage?: unknown) => Json {
  const object = operation === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  const extras: Json = {};
  for (const key in answer) if (!framedFields.has(key)) extras[key] = answer[key];
  const copy = (target: Json, key: string) => {
    if (key in answer) target[key] = answer[key];
  };
  return (choices, first, usage) => {
    const chunk: Json = {};
    copy(chunk, 'id');
    chunk.object = object;
    copy(chunk, 'created');
    if (operation === 'chat') {
      copy(chunk, 'model');
      copy(chunk, 'service_tier');
      copy(chunk, 'system_fingerprint');
      chunk.choices = choices;
    } else {
      chunk.choices = choices;
      copy(chunk, 'model');
      copy(chunk, 'system_fingerprint');
      copy(chunk, 'service_tier');
    }
    if (first) Object.assign(chunk, extras);
    if (usage !== undefined) chunk.usage = usage;
    return chunk;
  };
}

/**
 * Text a model writes as it goes, streamed in pieces; other strings of a content block (a
 * signature, redacted data) arrive whole after it, as providers send them.
 */
const proseFields = new Set(['text', 'thinking']);

/** The message texts that chat logprobs follow, each with its own list of tokens. */
const logprobsFields = ['content', 'refusal'] as const;
type LogprobsField = (typeof logprobsFields)[number];

/** Message fields with an order and shape of their own in a stream. */
const chatMessageFields = new Set(['role', 'content', 'refusal', 'tool_calls', 'content_blocks']);

/**
 * The parts of one chat choice, in the order providers stream them: the role (with `content: ''`,
 * or null when there is none, and `refusal` as OpenAI opens it), reasoning, the content, a refusal,
 * the tool calls, whatever else the message holds, and a last part with an empty delta and the
 * finish reason. Fields of the message that are not text go whole into one delta; empty and
 * scalar ones ride with the role, so that they reach the reader without a part of their own.
 */
function* chatChoiceParts(choice: Json, index: number): Generator<Json> {
  const part = (delta: Json, logprobs: unknown = null, finishReason: unknown = null): Json => ({ index, delta, logprobs, finish_reason: finishReason });
  const message = isPlainObject(choice.message) ? choice.message : {};
  const opening: Json = { role: message.role ?? 'assistant', content: typeof message.content === 'string' ? '' : (message.content ?? null) };
  if ('refusal' in message) opening.refusal = typeof message.refusal === 'string' ? '' : message.refusal;
  const texts: string[] = [];
  const wholes: string[] = [];
  for (const key in message) {
    if (chatMessageFields.has(key)) continue;
    const value = message[key];
    if (typeof value === 'string' && value !== '') texts.push(key);
    else if (value === null || typeof value !== 'object' || (Array.isArray(value) && value.length === 0)) opening[key] = value;
    else wholes.push(key);
  }
  const blocks = indexedParts(message.content_blocks);
  const calls = indexedParts(message.tool_calls);
  if (!blocks && 'content_blocks' in message) {
    if (isWhole(message.content_blocks)) wholes.push('content_blocks');
    else opening.content_blocks = message.content_blocks;
  }
  if (!calls && 'tool_calls' in message) {
    if (isWhole(message.tool_calls)) wholes.push('tool_calls');
    else opening.tool_calls = message.tool_calls;
  }

  const logprobs = chatLogprobs(choice.logprobs, message);
  yield part(opening, logprobs.opening);
  for (const [position, block] of (blocks ?? []).entries()) {
    const { type, ...fields } = block;
    const head: Json = { index: position };
    if ('type' in block) head.type = type;
    const start: Json = { ...head };
    const prose: string[] = [];
    const later: string[] = [];
    for (const key in fields) {
      const value = fields[key];
      if (typeof value !== 'string' || value === '') start[key] = value;
      else (proseFields.has(key) ? prose : later).push(key);
    }
    if (Object.keys(start).length > Object.keys(head).length || prose.length + later.length === 0) yield part({ content_blocks: [start] });
    for (const key of prose) for (const piece of textPieces(fields[key] as string)) yield part({ content_blocks: [{ ...head, [key]: piece }] });
    for (const key of later) yield part({ content_blocks: [{ ...head, [key]: fields[key] }] });
  }
  for (const key of texts) for (const piece of textPieces(message[key] as string)) yield part({ [key]: piece });
  for (const field of logprobsFields) {
    const text = message[field];
    if (typeof text !== 'string') continue;
    for (const { piece, logprobs: own } of logprobs.pieces(field, text)) yield part({ [field]: piece }, own);
  }
  for (const [position, call] of (calls ?? []).entries()) {
    const { index: _index, function: fn, ...fields } = call;
    const start: Json = { index: position, ...fields };
    const args = isPlainObject(fn) ? fn.arguments : undefined;
    if (isPlainObject(fn)) start.function = typeof args === 'string' ? { ...fn, arguments: '' } : { ...fn };
    else if (fn !== undefined) start.function = fn;
    yield part({ tool_calls: [start] });
    if (typeof args === 'string') for (const piece of textPieces(args)) yield part({ tool_calls: [{ index: position, function: { arguments: piece } }] });
  }
  for (const key of wholes) yield part({ [key]: message[key] });
  yield { ...part({}, null, choice.finish_reason ?? null), ...choiceExtras(choice, chatChoiceFields) };
}

const chatChoiceFields = new Set(['index', 'message', 'logprobs', 'finish_reason']);
const completionChoiceFields = new Set(['index', 'text', 'logprobs', 'finish_reason']);

/** A choice's fields that streams know nothing of: they ride on its last chunk. */
function choiceExtras(choice: Json, known: Set<string>): Json {
  const extras: Json = {};
  for (const key in choice) if (!known.has(key)) extras[key] = choice[key];
  return extras;
}

/** The elements of `tool_calls` or `content_blocks` when they can be streamed by index. */
function indexedParts(value: unknown): Json[] | undefined {
  return Array.isArray(value) && value.length > 0 && value.every(isPlainObject) ? value : undefined;
}

/** A value that needs a delta of its own: anything but a scalar, null or an empty array. */
function isWhole(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !(Array.isArray(value) && value.length === 0);
}

interface TextPiece {
  piece: string;
  logprobs: unknown;
}

/**
 * How a chat choice's logprobs are streamed. When the tokens of `content` (and `refusal`) spell
 * the text exactly, the text is cut at token boundaries and each chunk carries its own tokens, as a
 * live stream does; the first chunk carries the object with empty lists, so that fields without
 * tokens (null, or an empty list) arrive too. Otherwise the stored object goes whole on the first
 * chunk: a reader that merges chunks still ends with the same logprobs.
 */
function chatLogprobs(stored: unknown, message: Json): { opening: unknown; pieces(field: LogprobsField, text: string): Iterable<TextPiece> } {
  const plain = function* (_field: LogprobsField, text: string) {
    for (const piece of textPieces(text)) yield { piece, logprobs: null };
  };
  if (!isPlainObject(stored)) return { opening: stored ?? null, pieces: plain };
  const spelled = new Map<LogprobsField, { tokens: unknown[]; texts: string[] }>();
  for (const field of logprobsFields) {
    const tokens = stored[field];
    if (!Array.isArray(tokens)) continue;
    const texts = tokenTexts(tokens);
    const text = message[field];
    if (!texts || texts.join('') !== (typeof text === 'string' ? text : '')) return { opening: stored, pieces: plain };
    spelled.set(field, { tokens, texts });
  }
  const opening: Json = { ...stored };
  for (const field of spelled.keys()) opening[field] = [];
  return {
    opening,
    pieces(field, text) {
      const own = spelled.get(field);
      if (!own) return plain(field, text);
      return groupTokens(own.texts).map(([start, end]) => {
        const part: Json = {};
        for (const key of logprobsFields) if (key in stored) part[key] = key === field ? own.tokens.slice(start, end) : null;
        return { piece: own.texts.slice(start, end).join(''), logprobs: part };
      });
    },
  };
}

/** The text of each token entry (`{token, logprob, …}`), or undefined when one has none. */
function tokenTexts(tokens: unknown[]): string[] | undefined {
  const texts: string[] = [];
  for (const entry of tokens) {
    if (!isPlainObject(entry) || typeof entry.token !== 'string') return undefined;
    texts.push(entry.token);
  }
  return texts;
}

/**
 * The parts of one `text_completion` choice: the text in runs, then an empty text with the finish
 * reason. Logprobs (parallel lists: `tokens`, `token_logprobs`, `top_logprobs`, `text_offset`)
 * follow the text when the tokens spell it; otherwise they go whole with the first part.
 */
function* completionChoiceParts(choice: Json, index: number): Generator<Json> {
  const part = (text: string, logprobs: unknown, finishReason: unknown = null): Json => ({ text, index, logprobs, finish_reason: finishReason });
  const text = typeof choice.text === 'string' ? choice.text : '';
  const stored = choice.logprobs;
  const lists = isPlainObject(stored) ? stored : {};
  const tokens = Array.isArray(lists.tokens) && lists.tokens.every((token) => typeof token === 'string') ? (lists.tokens as string[]) : undefined;
  const spelled =
    tokens !== undefined &&
    text !== '' &&
    tokens.join('') === text &&
    Object.values(lists).every((list) => Array.isArray(list) && list.length === tokens.length);
  let pending = stored ?? null;
  if (spelled) {
    for (const [start, end] of groupTokens(tokens)) {
      const own: Json = {};
      for (const key in lists) own[key] = (lists[key] as unknown[]).slice(start, end);
      yield part(tokens.slice(start, end).join(''), own);
    }
    pending = null;
  } else {
    for (const piece of textPieces(text)) {
      yield part(piece, pending);
      pending = null;
    }
  }
  yield { ...part('', pending, choice.finish_reason ?? null), ...choiceExtras(choice, completionChoiceFields) };
}

/** About a few tokens' worth of text per chunk: small enough to look live, large enough to stay cheap. */
const pieceTarget = 16;

/** A word longer than `pieceTarget`, in slices of whole code points. */
const longWordSlices = new RegExp(`[\\s\\S]{1,${pieceTarget}}`, 'gu');

/**
 * Cuts text into runs of whole words of about `pieceTarget` characters; a word longer than that is
 * cut at code point boundaries (never inside a surrogate pair, so every piece is valid UTF-8 on its
 * own). The pieces join back to the text; an empty text gives none.
 */
export function* textPieces(text: string): Generator<string> {
  let run = '';
  for (const [word] of text.matchAll(/\s*\S+|\s+/gu)) {
    for (const slice of word.length > pieceTarget ? word.match(longWordSlices)! : [word]) {
      if (run !== '' && run.length + slice.length > pieceTarget) {
        yield run;
        run = '';
      }
      run += slice;
    }
  }
  if (run !== '') yield run;
}

/** Ranges `[start, end)` of consecutive tokens holding about `pieceTarget` characters each. */
function groupTokens(tokens: string[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  let start = 0;
  let length = 0;
  tokens.forEach((token, position) => {
    if (position > start && length + token.length > pieceTarget) {
      ranges.push([start, position]);
      start = position;
      length = 0;
    }
    length += token.length;
  });
  if (tokens.length > start) ranges.push([start, tokens.length]);
  return ranges;
}
