import type { Readable } from 'node:stream';
import { isPlainObject } from '../core/plain-object';
import { readableOfEvents, textPieces } from './sse-replay';

type Json = Record<string, unknown>;

/**
 * A stored finished response as the Responses event stream a streamed request would have received,
 * with the events, shapes and order of the gateway's own streams (events-from-chat.ts), each
 * written as `event: <type>\ndata: <json>\n\n` with a `sequence_number` from 0:
 *
 * - `response.created` and `response.in_progress`: the response as it starts (in progress, no
 *   output, no usage);
 * - per output item, in order: `response.output_item.added` with the item as it starts (its texts
 *   and lists empty, in progress), its parts' events, then `response.output_item.done` with the
 *   item as stored. A message's parts and a reasoning item's content are content parts, a reasoning
 *   item's summary is summary parts; each part is added empty, its text follows in runs of a few
 *   tokens (as the chat replay cuts it), then its done events. A function call's arguments are
 *   deltas. Other items (built-in tool calls) have only the added and done events;
 * - `response.completed`, or `response.incomplete` for an incomplete response, with the whole
 *   stored response: what a client (or `captureStream`) keeps as the answer.
 *
 * Every event is its own push, produced as the stream is read.
 */
export function replayResponseAsSse(response: Json): Readable {
  return readableOfEvents(responseEvents(response));
}

/** The whole replay as SSE text, for a response small enough to hold it (a cache keeps it for the next hit). */
export function replayResponseAsSseText(response: Json): string {
  let text = '';
  for (const event of responseEvents(response)) text += event;
  return text;
}

type Emit = (type: string, fields: Json) => string;

function* responseEvents(response: Json): Generator<string> {
  let sequence = 0;
  const emit: Emit = (type, fields) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  const start = { ...response, status: 'in_progress', output: [], output_text: '', error: null, incomplete_details: null, usage: null };
  yield emit('response.created', { response: start });
  yield emit('response.in_progress', { response: start });
  const output = Array.isArray(response.output) ? response.output : [];
  for (const [outputIndex, item] of output.entries()) yield* itemEvents(emit, item, outputIndex);
  yield emit(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
}

/** The events that add and finish a list of parts: a message's or reasoning's content, or a reasoning summary. */
interface PartList {
  added: string;
  done: string;
  /** The field the events name a part's position by. */
  index: 'content_index' | 'summary_index';
}

const contentParts: PartList = { added: 'response.content_part.added', done: 'response.content_part.done', index: 'content_index' };
const summaryParts: PartList = { added: 'response.reasoning_summary_part.added', done: 'response.reasoning_summary_part.done', index: 'summary_index' };

/** How the text of a part streams, by the part's type; a part of another type is added and done whole. */
interface TextStream {
  field: string;
  delta: string;
  done: string;
  /**
   * An output text: it has annotations (each an event of its own after the text) and token log
   * probabilities (an empty list on each delta, the stored list on the done event).
   */
  outputText?: true;
}

const textStreams = new Map<unknown, TextStream>([
  ['output_text', { field: 'text', delta: 'response.output_text.delta', done: 'response.output_text.done', outputText: true }],
  ['refusal', { field: 'refusal', delta: 'response.refusal.delta', done: 'response.refusal.done' }],
  ['summary_text', { field: 'text', delta: 'response.reasoning_summary_text.delta', done: 'response.reasoning_summary_text.done' }],
  ['reasoning_text', { field: 'text', delta: 'response.reasoning_text.delta', done: 'response.reasoning_text.done' }],
]);

function* itemEvents(emit: Emit, item: unknown, outputIndex: number): Generator<string> {
  yield emit('response.output_item.added', { output_index: outputIndex, item: isPlainObject(item) ? itemAtStart(item) : item });
  if (isPlainObject(item)) {
    const at: Json = { item_id: item.id, output_index: outputIndex };
    if (item.type === 'message') yield* partEvents(emit, at, item.content, contentParts);
    else if (item.type === 'reasoning') {
      yield* partEvents(emit, at, item.summary, summaryParts);
      yield* partEvents(emit, at, item.content, contentParts);
    } else if (item.type === 'function_call' && typeof item.arguments === 'string') {
      for (const piece of textPieces(item.arguments)) yield emit('response.function_call_arguments.delta', { ...at, delta: piece });
      yield emit('response.function_call_arguments.done', { ...at, name: item.name, arguments: item.arguments });
    }
  }
  yield emit('response.output_item.done', { output_index: outputIndex, item });
}

/** An item as its added event shows it: in progress, before any of its parts or arguments. */
function itemAtStart(item: Json): Json {
  const start: Json = { ...item };
  if ('status' in item) start.status = 'in_progress';
  if (item.type === 'message' && Array.isArray(item.content)) start.content = [];
  else if (item.type === 'function_call' && typeof item.arguments === 'string') start.arguments = '';
  else if (item.type === 'reasoning') {
    if (Array.isArray(item.summary)) start.summary = [];
    if (Array.isArray(item.content)) start.content = [];
  }
  return start;
}

function* partEvents(emit: Emit, at: Json, parts: unknown, list: PartList): Generator<string> {
  if (!Array.isArray(parts)) return;
  for (const [position, part] of parts.entries()) {
    const where: Json = { ...at, [list.index]: position };
    const stream = isPlainObject(part) ? textStreams.get(part.type) : undefined;
    const text = stream && (part as Json)[stream.field];
    if (!stream || typeof text !== 'string') {
      yield emit(list.added, { ...where, part });
      yield emit(list.done, { ...where, part });
      continue;
    }
    const stored = part as Json;
    yield emit(list.added, { ...where, part: partAtStart(stored, stream.field) });
    for (const piece of textPieces(text)) yield emit(stream.delta, stream.outputText ? { ...where, delta: piece, logprobs: [] } : { ...where, delta: piece });
    if (stream.outputText && Array.isArray(stored.annotations))
      for (const [annotationIndex, annotation] of stored.annotations.entries())
        yield emit('response.output_text.annotation.added', { ...where, annotation_index: annotationIndex, annotation });
    const done: Json = { ...where, [stream.field]: text };
    if (stream.outputText) done.logprobs = Array.isArray(stored.logprobs) ? stored.logprobs : [];
    yield emit(stream.done, done);
    yield emit(list.done, { ...where, part });
  }
}

/** A part as its added event shows it: no text yet, and its lists (annotations, log probabilities) empty, filled by later events. */
function partAtStart(part: Json, field: string): Json {
  const start: Json = { ...part, [field]: '' };
  if (Array.isArray(part.annotations)) start.annotations = [];
  if (Array.isArray(part.logprobs)) start.logprobs = [];
  return start;
}
