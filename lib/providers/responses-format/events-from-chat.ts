/**
 * A streamed Responses answer made from a streamed chat completion: the chat chunks the core sends
 * (every adapter speaks them) become the Responses API's semantic events, each written as
 * `event: <type>\ndata: <json>\n\n` with a `sequence_number` counting from 0.
 *
 * - `response.created` and `response.in_progress` at once, before any chunk arrives.
 * - Thinking (`content_blocks` deltas): a `reasoning` item, one summary part per thinking block, as
 *   the whole answer shows it (from-chat.ts; signatures and redacted thinking are left out there too).
 *   It is done as soon as anything else arrives (text, a tool call), since a reasoning model reasons
 *   before it answers and clients show "thinking" until then; thinking after that is a new item.
 * - Text and refusal deltas: one assistant `message` item, an `output_text` (or `refusal`) part.
 * - Tool calls: one `function_call` item per chat tool-call index, its argument fragments as deltas.
 * - Message and function-call items stay open to the end, because chat streams may interleave
 *   their deltas (parallel tool calls, text after a tool call); they are then done in output order.
 * - The finish reason and `[DONE]` (or the end of the bytes after a finish reason) end it with
 *   `response.completed`, or `response.incomplete` for `length` / `content_filter`. An error event,
 *   an unreadable chunk or bytes that end with neither end it with `error` then `response.failed`.
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
import { Transform } from 'node:stream';
import { newId } from '../../core/ids';
import { sseEventDecoder } from '../openai-format/provider-stream';
import type { ChatCompletionChunk, ChunkDelta, FinishReason, Usage } from '../openai-format/types';
import { endingOf, usageFromChat } from './from-chat';
import { outputText } from './response-object';
import type { OutputItem, OutputTextPart, RefusalPart, ResponseObject } from './types';

type MessageOutput = Extract<OutputItem, { type: 'message' }>;
type FunctionCallOutput = Extract<OutputItem, { type: 'function_call' }>;
type ReasoningOutput = Extract<OutputItem, { type: 'reasoning' }>;

/** An output item being streamed, with what its events need to say where they belong. */
type ItemState =
  | { kind: 'message'; item: MessageOutput; outputIndex: number; done: boolean; textPart?: PartState; refusalPart?: PartState }
  | { kind: 'function_call'; item: FunctionCallOutput; outputIndex: number; done: boolean; head: string }
  | {
      kind: 'reasoning';
      item: ReasoningOutput;
      outputIndex: number;
      done: boolean;
      /** The summary part being streamed: its thinking block's index and the JSON of its deltas' fixed fields. */
      part?: { blockIndex: number; summary: { type: 'summary_text'; text: string }; summaryIndex: number; head: string };
    };

/** A content part of the message; `head` is the JSON of its delta events' fixed fields. */
interface PartState {
  part: OutputTextPart | RefusalPart;
  contentIndex: number;
  head: string;
}

/** Why a response failed: the chat error's code (or type), message and param, and its type for the nested form. */
type Failure = { code: string; message: string; param: string | null; type: string };

/**
 * Chat-completions SSE bytes in, Responses SSE bytes out. `base` is the response before its answer
 * (see `baseResponse`); `onEnd` receives the final response (completed, incomplete or failed) once,
 * also when the stream is destroyed before it ended (then as failed), so it can be stored.
 */
export function responsesEventStream(base: ResponseObject, onEnd: (response: ResponseObject) => void): Transform {
  // The items in `response.output` are the objects the deltas grow: the final response is built as
  // the stream goes, never rebuilt or serialized again until the end.
  const response: ResponseObject = { ...base, status: 'in_progress', output: [], output_text: '', error: null, incomplete_details: null, usage: null };
  const decoder = sseEventDecoder();
  const items: ItemState[] = [];
  const toolCalls = new Map<number, ItemState & { kind: 'function_call' }>();
  let message: (ItemState & { kind: 'message' }) | undefined;
  let openReasoning: (ItemState & { kind: 'reasoning' }) | undefined;
  let finishReason: FinishReason | null = null;
  let usage: Usage | undefined;
  let model: string | undefined;
  let ended = false;
  let sequence = 0;
  // Events of one read are written together: one push per chunk of input, not one per event.
  let out = '';

  const emit = (type: string, fields: Record<string, unknown>) => {
    out += `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  };
  // Deltas are most of the events: their fixed fields are serialized once per item, the text each time.
  const emitDelta = (type: string, head: string, delta: string) => {
    out += `event: ${type}\ndata: {"type":"${type}","sequence_number":${sequence++},${head},"delta":${JSON.stringify(delta)}`;
    out += type === 'response.output_text.delta' ? ',"logprobs":[]}\n\n' : '}\n\n';
  };

  const addItem = <State extends ItemState>(state: State): State => {
    items.push(state);
    response.output.push(state.item);
    emit('response.output_item.added', { output_index: state.outputIndex, item: state.item });
    return state;
  };

  const closeReasoning = () => {
    if (openReasoning) closeItem(openReasoning, 'completed');
    openReasoning = undefined;
  };

  const closeSummaryPart = (state: ItemState & { kind: 'reasoning' }) => {
    const part = state.part;
    if (!part) return;
    state.part = undefined;
    const at = { item_id: state.item.id, output_index: state.outputIndex, summary_index: part.summaryIndex };
    emit('response.reasoning_summary_text.done', { ...at, text: part.summary.text });
    emit('response.reasoning_summary_part.done', { ...at, part: part.summary });
  };

  const thinking = (block: NonNullable<ChunkDelta['content_blocks']>[number]) => {
    // Signatures and redacted thinking have no text to show; the whole answer leaves them out too.
    if ((block.type ?? 'thinking') !== 'thinking' || !block.thinking) return;
    if (!openReasoning) {
      // No status: OpenAI's reasoning items have none, nor do the whole answer's (from-chat.ts).
      const item: ReasoningOutput = { id: newId('rs'), type: 'reasoning', summary: [] };
      openReasoning = addItem({ kind: 'reasoning', item, outputIndex: items.length, done: false });
    }
    const state = openReasoning;
    if (state.part?.blockIndex !== block.index) {
      closeSummaryPart(state);
      const summary = { type: 'summary_text' as const, text: '' };
      const summaryIndex = state.item.summary.length;
      state.item.summary.push(summary);
      emit('response.reasoning_summary_part.added', {
        item_id: state.item.id,
        output_index: state.outputIndex,
        summary_index: summaryIndex,
        part: { type: 'summary_text', text: '' },
      });
      const head = `"item_id":"${state.item.id}","output_index":${state.outputIndex},"summary_index":${summaryIndex}`;
      state.part = { blockIndex: block.index, summary, summaryIndex, head };
    }
    state.part!.summary.text += block.thinking;
    emitDelta('response.reasoning_summary_text.delta', state.part!.head, block.thinking);
  };

  const messageItem = (): ItemState & { kind: 'message' } => {
    closeReasoning();
    if (message) return message;
    const item: MessageOutput = { id: newId('msg'), type: 'message', status: 'in_progress', role: 'assistant', content: [] };
    message = addItem({ kind: 'message', item, outputIndex: items.length, done: false });
    return message;
  };

  const messagePart = (state: ItemState & { kind: 'message' }, part: OutputTextPart | RefusalPart): PartState => {
    const contentIndex = state.item.content.length;
    state.item.content.push(part);
    emit('response.content_part.added', { item_id: state.item.id, output_index: state.outputIndex, content_index: contentIndex, part });
    return { part, contentIndex, head: `"item_id":"${state.item.id}","output_index":${state.outputIndex},"content_index":${contentIndex}` };
  };

  const text = (delta: string) => {
    const state = messageItem();
    // The part is added empty, as OpenAI adds it; the object in the output then grows with the text.
    state.textPart ??= messagePart(state, { type: 'output_text', text: '', annotations: [] });
    (state.textPart.part as OutputTextPart).text += delta;
    emitDelta('response.output_text.delta', state.textPart.head, delta);
  };

  const refusal = (delta: string) => {
    const state = messageItem();
    state.refusalPart ??= messagePart(state, { type: 'refusal', refusal: '' });
    (state.refusalPart.part as RefusalPart).refusal += delta;
    emitDelta('response.refusal.delta', state.refusalPart.head, delta);
  };

  const toolCall = (call: NonNullable<ChunkDelta['tool_calls']>[number]) => {
    closeReasoning();
    let state = toolCalls.get(call.index);
    if (!state) {
      const item: FunctionCallOutput = {
        id: newId('fc'),
        type: 'function_call',
        status: 'in_progress',
        call_id: call.id || newId('call'),
        name: call.function?.name ?? '',
        arguments: '',
      };
      const outputIndex = items.length;
      state = addItem({ kind: 'function_call', item, outputIndex, done: false, head: `"item_id":"${item.id}","output_index":${outputIndex}` });
      toolCalls.set(call.index, state);
    } else if (call.function?.name) {
      // A name sent in pieces: the item's final form has all of it.
      state.item.name += call.function.name;
    }
    const fragment = call.function?.arguments;
    if (fragment) {
      state.item.arguments += fragment;
      emitDelta('response.function_call_arguments.delta', state.head, fragment);
    }
  };

  function closeItem(state: ItemState, status: 'completed' | 'incomplete') {
    if (state.done) return;
    state.done = true;
    const where = { item_id: state.item.id, output_index: state.outputIndex };
    if (state.kind === 'reasoning') closeSummaryPart(state);
    else if (state.kind === 'message') {
      state.item.content.forEach((part, contentIndex) => {
        const at = { ...where, content_index: contentIndex };
        if (part.type === 'output_text') emit('response.output_text.done', { ...at, text: part.text, logprobs: [] });
        else if (part.type === 'refusal') emit('response.refusal.done', { ...at, refusal: part.refusal });
        emit('response.content_part.done', { ...at, part });
      });
    } else {
      emit('response.function_call_arguments.done', { ...where, name: state.item.name, arguments: state.item.arguments });
    }
    if (state.kind !== 'reasoning') state.item.status = status;
    emit('response.output_item.done', { output_index: state.outputIndex, item: state.item });
  }

  /** The response as it ends, from what was streamed. */
  const settle = (status: ResponseObject['status']) => {
    response.status = status;
    // The model that answered, as the whole answer names it (from-chat.ts).
    if (model) response.model = model;
    response.usage = usageFromChat(usage);
    response.output_text = outputText(response.output);
  };

  const report = () => {
    stream.push(out);
    out = '';
    onEnd(response);
  };

  const complete = () => {
    if (ended) return;
    ended = true;
    // An answer with nothing at all still gets its (empty) message, as the whole answer does.
    if (items.length === 0) messagePart(messageItem(), { type: 'output_text', text: '', annotations: [] });
    const ending = endingOf(finishReason);
    // Items done earlier (reasoning before the answer) stay as they were: only open ones are cut short.
    for (const state of items) closeItem(state, ending.status);
    openReasoning = undefined;
    response.incomplete_details = ending.details;
    settle(ending.status);
    emit(ending.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
    report();
  };

  /** A failed response keeps what was streamed; what was still open did not finish. */
  const failed = (failure: Failure) => {
    ended = true;
    for (const state of items) if (!state.done && state.kind !== 'reasoning') state.item.status = 'incomplete';
    response.error = { code: failure.code, message: failure.message };
    settle('failed');
  };

  const fail = (error: { code?: string | null; type?: string | null; message?: string | null; param?: string | null }) => {
    if (ended) return;
    const code = error.code || error.type || 'server_error';
    const failure = { code, message: error.message || 'The model failed to answer.', param: error.param ?? null, type: error.type || code };
    failed(failure);
    // OpenAI sends `error` before `response.failed`. Its reference puts code/message/param at the
    // top level, while the API nests them under `error` (which the SDKs raise on): both are sent.
    emit('error', {
      code,
      message: failure.message,
      param: failure.param,
      error: { type: failure.type, code, message: failure.message, param: failure.param },
    });
    emit('response.failed', { response });
    report();
  };

  const handle = (data: string) => {
    if (ended) return;
    if (data === '[DONE]') {
      // The gateway's adapters turn a stream cut short into an error event, so [DONE] means finished.
      complete();
      return;
    }
    let chunk: ChatCompletionChunk & { error?: { message?: string; type?: string; code?: string | null; param?: string | null } };
    const unreadable = { code: 'server_error', message: 'The model stream sent an event that could not be read.' };
    try {
      chunk = JSON.parse(data);
    } catch {
      fail(unreadable);
      return;
    }
    if (chunk === null || typeof chunk !== 'object') {
      fail(unreadable);
      return;
    }
    if (chunk.error) {
      fail(chunk.error);
      return;
    }
    if (chunk.usage) usage = chunk.usage;
    if (typeof chunk.model === 'string' && chunk.model !== '') model = chunk.model;
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices) {
      // The Responses API has one answer: other choices (n > 1) have nowhere to go.
      if ((choice.index ?? 0) !== 0) continue;
      const delta = choice.delta;
      if (delta) {
        if (delta.content_blocks) for (const block of delta.content_blocks) thinking(block);
        if (delta.content) text(delta.content);
        if (delta.refusal) refusal(delta.refusal);
        if (delta.tool_calls) for (const call of delta.tool_calls) toolCall(call);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  };

  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (!ended) for (const event of decoder.push(chunk)) handle(event.data);
      if (out) {
        this.push(out);
        out = '';
      }
      callback();
    },
    flush(callback) {
      if (!ended) for (const event of decoder.end()) handle(event.data);
      if (!ended) {
        if (finishReason) complete();
        else fail({ code: 'server_error', message: 'The model stream ended before the response was complete.' });
      }
      callback();
    },
    destroy(error, callback) {
      // Torn down before the end (the client went away, the core's stream broke): nothing can be
      // written any more, but the response is reported, so that what its id names is known.
      if (!ended) {
        failed({ code: 'server_error', message: 'The stream was closed before the response was complete.', param: null, type: 'server_error' });
        onEnd(response);
      }
      callback(error);
    },
  });

  // Serialized once for both events: the response as it starts, no output yet.
  const initial = JSON.stringify(response);
  out += `event: response.created\ndata: {"type":"response.created","sequence_number":${sequence++},"response":${initial}}\n\n`;
  out += `event: response.in_progress\ndata: {"type":"response.in_progress","sequence_number":${sequence++},"response":${initial}}\n\n`;
  stream.push(out);
  out = '';
  return stream;
}
