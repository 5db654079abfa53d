/**
 * OpenAI's Responses API (`POST …/responses`) for the fakes that serve it (fake-upstream.ts, and
 * azure.ts for Azure's Responses paths): the response object, or with `stream: true` its event
 * stream (`event: <type>` and `data:` with a `sequence_number` from 0), in OpenAI's wire format. Each
 * fake keeps the responses it made (unless `store: false`), so `previous_response_id` continues them.
 * The caller answers a model named `error-<status>` itself, before this.
 *
 * What it answers. "The conversation" is the stored one of `previous_response_id` and then the new
 * input; N is the number of user messages in it, so a test sees how much of a conversation reached
 * the provider (a gateway that sends both the provider's id and the history counts turns twice):
 * - "echo: <last user text> (turn N)" in one assistant message with one `output_text` part.
 * - input ending in a `function_call_output`: "the tool said: <output> (turn N)".
 * - function tools: `function_call` items instead, planned as the chat fake plans tool calls (a named
 *   or `required` tool_choice, or "call a tool" / "call all tools" in the last user text).
 * - `web_search_preview` (or `web_search`) in `tools`: a `web_search_call` item (the last user text as
 *   its query) before the message.
 * - `text.format` `json_schema`: the text is JSON made from the schema; `json_object`: {"echo","turn"}.
 * - `reasoning.summary` set: a `reasoning` item first, with a one-part summary, and
 *   `encrypted_content` when `include` has `reasoning.encrypted_content`.
 * - `max_output_tokens` below 5: the text cut to that many tokens, `status: "incomplete"`,
 *   `incomplete_details: {reason: "max_output_tokens"}` (`response.incomplete` when streamed).
 * - model `error-midstream`: a 500; streamed, two text deltas, then `error` and `response.failed`.
 * Refused as OpenAI refuses them: an unknown `previous_response_id` (404
 * `previous_response_not_found`), a `function_call_output` no `function_call` of the conversation
 * has the call_id of (400), an `item_reference` or a reasoning item with an id it never stored (404),
 * encrypted content it did not make (400 `invalid_encrypted_content`). It does not run background
 * responses: `background: true` is a 400.
 * Usage (fakeTokenCount): input 3 + (4 + tokens of its text) per conversation item + the
 * instructions, `cached_tokens` the stored conversation's part of it; output the tokens of what it
 * wrote, `reasoning_tokens` those of the summary.
 * @see https://platform.openai.com/docs/api-reference/responses
 * @see https://platform.openai.com/docs/api-reference/responses-streaming
 */
import { randomBytes } from 'node:crypto';
import { fakeTokenCount, isObj, type Obj, planToolCalls, sampleFromSchema, splitPieces, textOfContent } from './openai-shared';

/** A whole answer (a response object or an error body), or the events of a streamed one. */
export type FakeResponsesAnswer = { status: number; json: string } | { status: 200; events: string[] };

export interface StoredResponse {
  response: Obj;
  /** The conversation a continuation starts from: earlier items, this input, this output. */
  conversation: Obj[];
}

export interface FakeResponsesApi {
  /** The answer to a `POST …/responses` whose body parsed to `body` (a JSON object with a model). */
  answer(body: Obj): FakeResponsesAnswer;
  /** The responses kept so far, by id. */
  readonly stored: ReadonlyMap<string, StoredResponse>;
}

/** OpenAI's ids: a prefix and 48 hex digits. */
const openAIId = (prefix: string) => `${prefix}_${randomBytes(24).toString('hex')}`;

class Refusal {
  constructor(
    readonly status: number,
    readonly message: string,
    readonly param: string | null,
    readonly code: string | null,
  ) {}

  answer(): FakeResponsesAnswer {
    const type = this.status >= 500 ? 'server_error' : 'invalid_request_error';
    return { status: this.status, json: JSON.stringify({ error: { message: this.message, type, param: this.param, code: this.code } }) };
  }
}

const serverErrorMessage = 'The server had an error while processing your request (fake upstream).';

/** A Responses API of its own: what one fake instance made and stored. */
export function fakeResponsesApi(options: { deltaCount?: number } = {}): FakeResponsesApi {
  const deltaCount = options.deltaCount ?? 4;
  const stored = new Map<string, StoredResponse>();
  /** Output items of stored responses, by id: what an `item_reference` or a reasoning id may name. */
  const storedItems = new Map<string, Obj>();
  /** Encrypted reasoning it handed out; valid whether the response was stored or not. */
  const encrypted = new Set<string>();

  function answer(body: Obj): FakeResponsesAnswer {
    try {
      return respond(body);
    } catch (caught) {
      if (caught instanceof Refusal) return caught.answer();
      throw caught;
    }
  }

  function respond(body: Obj): FakeResponsesAnswer {
    const stream = body.stream === true;
    if (body.background === true) throw new Refusal(400, 'Background responses are not run by the fake upstream.', 'background', null);
    if (body.model === 'error-midstream' && !stream) throw new Refusal(500, serverErrorMessage, null, null);

    const earlier = earlierConversation(body.previous_response_id);
    const input = resolveInput(body.input, earlier);
    const conversation = [...earlier, ...input];
    if (conversation.length === 0) throw new Refusal(400, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter');

    const turn = conversation.filter(isUserMessage).length;
    const userText = lastUserText(conversation);
    const last = input.at(-1);
    const toolOutput = last?.type === 'function_call_output' ? outputTextOf(last.output) : undefined;
    const maxTokens = typeof body.max_output_tokens === 'number' ? body.max_output_tokens : undefined;
    const incomplete = maxTokens !== undefined && maxTokens < 5;

    const output: Obj[] = [];
    let reasoningTokens = 0;
    const reasoning = isObj(body.reasoning) ? body.reasoning : undefined;
    if (reasoning?.summary != null) {
      const summary = `Thinking about: ${userText}`;
      reasoningTokens = fakeTokenCount(summary);
      const item: Obj = { id: openAIId('rs'), type: 'reasoning', summary: [{ type: 'summary_text', text: summary }] };
      if (Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content')) {
        const content = `gAAAAAB${randomBytes(48).toString('base64url')}`;
        encrypted.add(content);
        item.encrypted_content = content;
      }
      output.push(item);
    }
    const calls = toolOutput === undefined ? plannedCalls(body, userText) : null;
    if (calls) {
      for (const call of calls) {
        output.push({ id: openAIId('fc'), type: 'function_call', status: 'completed', arguments: call.arguments, call_id: call.id, name: call.name });
      }
    } else {
      if (searches(body)) output.push({ id: openAIId('ws'), type: 'web_search_call', status: 'completed', action: { type: 'search', query: userText } });
      let text = messageText(body, { userText, toolOutput, turn });
      if (incomplete) text = text.slice(0, maxTokens * 4);
      const part = { type: 'output_text', annotations: [], logprobs: [], text };
      output.push({ id: openAIId('msg'), type: 'message', status: incomplete ? 'incomplete' : 'completed', content: [part], role: 'assistant' });
    }

    const inputTokens = 3 + fakeTokenCount(typeof body.instructions === 'string' ? body.instructions : '') + tokensOf(conversation);
    const outputTokens = reasoningTokens + outputTokensOf(output);
    const usage = {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: tokensOf(earlier) },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: reasoningTokens },
      total_tokens: inputTokens + outputTokens,
    };
    const response = responseObject(body, {
      id: openAIId('resp'),
      status: incomplete ? 'incomplete' : 'completed',
      incompleteDetails: incomplete ? { reason: 'max_output_tokens' } : null,
      output,
      usage,
    });

    if (body.model === 'error-midstream') return { status: 200, events: failingEvents(response) };
    if (body.store !== false) {
      stored.set(response.id as string, { response, conversation: [...conversation, ...output] });
      for (const item of output) storedItems.set(item.id as string, item);
    }
    return stream ? { status: 200, events: responseEvents(response, deltaCount) } : { status: 200, json: JSON.stringify(response) };
  }

  function earlierConversation(previousId: unknown): Obj[] {
    if (previousId === undefined || previousId === null) return [];
    if (typeof previousId !== 'string')
      throw new Refusal(400, "Invalid type for 'previous_response_id': expected a string.", 'previous_response_id', 'invalid_type');
    const found = stored.get(previousId);
    if (!found) throw new Refusal(404, `Previous response with id '${previousId}' not found.`, 'previous_response_id', 'previous_response_not_found');
    return found.conversation;
  }

  /** The new input as items, each checked as OpenAI checks it against what came before. */
  function resolveInput(input: unknown, earlier: Obj[]): Obj[] {
    if (input === undefined || input === null) return [];
    if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
    if (!Array.isArray(input)) throw new Refusal(400, "Invalid type for 'input': expected a string or an array of input items.", 'input', 'invalid_type');
    const items: Obj[] = [];
    input.forEach((raw, index) => {
      const at = `input[${index}]`;
      if (!isObj(raw)) throw new Refusal(400, `Invalid type for '${at}': expected an object.`, at, 'invalid_type');
      const item: Obj = raw.type === undefined && typeof raw.role === 'string' ? { type: 'message', ...raw } : raw;
      if (item.type === 'item_reference') {
        const referenced = storedItems.get(String(item.id));
        if (!referenced) throw new Refusal(404, `Item with id '${String(item.id)}' not found.`, 'input', null);
        items.push(referenced);
        return;
      }
      if (item.type === 'reasoning') checkReasoning(item, at);
      if (item.type === 'function_call_output') {
        const made = [...earlier, ...items].some((other) => other.type === 'function_call' && other.call_id === item.call_id);
        if (!made) throw new Refusal(400, `No tool call found for function call output with call_id ${String(item.call_id)}.`, 'input', null);
      }
      if (item.type === 'message' && (typeof item.role !== 'string' || (typeof item.content !== 'string' && !Array.isArray(item.content)))) {
        throw new Refusal(400, `Missing required parameter: '${at}.content'.`, `${at}.content`, 'missing_required_parameter');
      }
      items.push(item);
    });
    return items;
  }

  function checkReasoning(item: Obj, at: string): void {
    if (typeof item.id === 'string' && !storedItems.has(item.id)) {
      throw new Refusal(
        404,
        `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
        'input',
        null,
      );
    }
    if (item.encrypted_content !== undefined && item.encrypted_content !== null && !encrypted.has(String(item.encrypted_content))) {
      throw new Refusal(400, `The encrypted content for ${at} could not be verified.`, 'input', 'invalid_encrypted_content');
    }
    if (item.id === undefined && (item.encrypted_content === undefined || item.encrypted_content === null)) {
      throw new Refusal(400, `Missing required parameter: '${at}.encrypted_content'.`, `${at}.encrypted_content`, 'missing_required_parameter');
    }
  }

  return { answer, stored };
}

function isUserMessage(item: Obj): boolean {
  return item.type === 'message' && item.role === 'user';
}

function lastUserText(conversation: Obj[]): string {
  for (let i = conversation.length - 1; i >= 0; i--) if (isUserMessage(conversation[i])) return textOfContent(conversation[i].content);
  return '';
}

function outputTextOf(output: unknown): string {
  return typeof output === 'string' ? output : textOfContent(output);
}

/** Function tools in the chat fake's form, so the calls are planned the same way. */
function plannedCalls(body: Obj, userText: string) {
  const tools = (Array.isArray(body.tools) ? body.tools : [])
    .filter((tool): tool is Obj => isObj(tool) && tool.type === 'function' && typeof tool.name === 'string')
    .map((tool) => ({ type: 'function', function: { name: tool.name, parameters: tool.parameters ?? undefined } }));
  const choice = body.tool_choice;
  const chatChoice = isObj(choice) && choice.type === 'function' ? { type: 'function', function: { name: choice.name } } : choice;
  return planToolCalls({ tools, tool_choice: chatChoice }, userText);
}

function searches(body: Obj): boolean {
  if (body.tool_choice === 'none' || !Array.isArray(body.tools)) return false;
  return body.tools.some((tool) => isObj(tool) && typeof tool.type === 'string' && /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/.test(tool.type));
}

function messageText(body: Obj, facts: { userText: string; toolOutput?: string; turn: number }): string {
  if (facts.toolOutput !== undefined) return `the tool said: ${facts.toolOutput} (turn ${facts.turn})`;
  const format = isObj(body.text) && isObj(body.text.format) ? body.text.format : undefined;
  if (format?.type === 'json_schema') return JSON.stringify(sampleFromSchema(format.schema));
  if (format?.type === 'json_object') return JSON.stringify({ echo: facts.userText, turn: facts.turn });
  return `echo: ${facts.userText} (turn ${facts.turn})`;
}

/** The text of an item as the fake counts its tokens. */
function itemText(item: Obj): string {
  switch (item.type) {
    case 'message':
      return textOfContent(item.content);
    case 'function_call':
      return `${String(item.name)}${String(item.arguments)}`;
    case 'function_call_output':
      return outputTextOf(item.output);
    case 'reasoning':
      return textOfContent(item.summary);
    default:
      return '';
  }
}

function tokensOf(items: Obj[]): number {
  let tokens = 0;
  for (const item of items) tokens += 4 + fakeTokenCount(itemText(item));
  return tokens;
}

function outputTokensOf(output: Obj[]): number {
  let tokens = 0;
  for (const item of output) {
    if (item.type === 'message') tokens += Math.max(1, fakeTokenCount(itemText(item)));
    else if (item.type === 'function_call') tokens += 5 + fakeTokenCount(itemText(item));
  }
  return tokens;
}

interface ResponseFacts {
  id: string;
  status: string;
  incompleteDetails: Obj | null;
  output: Obj[];
  usage: Obj | null;
}

/** OpenAI's response object: the request's settings echoed with their defaults, and the answer. */
function responseObject(body: Obj, facts: ResponseFacts): Obj {
  const reasoning = isObj(body.reasoning) ? body.reasoning : {};
  const text = isObj(body.text) ? body.text : {};
  return {
    id: facts.id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: facts.status,
    background: false,
    error: null,
    incomplete_details: facts.incompleteDetails,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    model: body.model,
    output: facts.output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: 'default',
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    text: { format: text.format ?? { type: 'text' }, verbosity: text.verbosity ?? 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? 'disabled',
    usage: facts.usage,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/** Writes events as OpenAI does: the type on an `event:` line and first in the data, then the number. */
function eventWriter() {
  const events: string[] = [];
  let sequence = 0;
  const emit = (type: string, fields: Obj) => {
    events.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`);
  };
  return { events, emit };
}

/** The response as it stands before its first output item. */
function pendingResponse(response: Obj): Obj {
  return { ...response, status: 'in_progress', incomplete_details: null, output: [], usage: null };
}

/** The whole event sequence of a streamed response, each item's text or arguments in a few deltas. */
function responseEvents(response: Obj, deltaCount: number): string[] {
  const { events, emit } = eventWriter();
  const pending = pendingResponse(response);
  emit('response.created', { response: pending });
  emit('response.in_progress', { response: pending });
  (response.output as Obj[]).forEach((item, output_index) => {
    const item_id = item.id;
    switch (item.type) {
      case 'reasoning': {
        emit('response.output_item.added', { output_index, item: { id: item_id, type: 'reasoning', summary: [] } });
        (item.summary as Obj[]).forEach((part, summary_index) => {
          const text = String(part.text);
          emit('response.reasoning_summary_part.added', { item_id, output_index, summary_index, part: { type: 'summary_text', text: '' } });
          for (const delta of splitPieces(text, deltaCount)) emit('response.reasoning_summary_text.delta', { item_id, output_index, summary_index, delta });
          emit('response.reasoning_summary_text.done', { item_id, output_index, summary_index, text });
          emit('response.reasoning_summary_part.done', { item_id, output_index, summary_index, part });
        });
        break;
      }
      case 'web_search_call':
        emit('response.output_item.added', { output_index, item: { id: item_id, type: 'web_search_call', status: 'in_progress' } });
        emit('response.web_search_call.in_progress', { output_index, item_id });
        emit('response.web_search_call.searching', { output_index, item_id });
        emit('response.web_search_call.completed', { output_index, item_id });
        break;
      case 'function_call': {
        const args = String(item.arguments);
        emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
        for (const delta of splitPieces(args, deltaCount)) emit('response.function_call_arguments.delta', { item_id, output_index, delta });
        emit('response.function_call_arguments.done', { item_id, output_index, arguments: args });
        break;
      }
      case 'message':
        emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
        (item.content as Obj[]).forEach((part, content_index) => {
          const text = String(part.text);
          emit('response.content_part.added', { item_id, output_index, content_index, part: { ...part, text: '' } });
          for (const delta of splitPieces(text, deltaCount)) emit('response.output_text.delta', { item_id, output_index, content_index, delta, logprobs: [] });
          emit('response.output_text.done', { item_id, output_index, content_index, text, logprobs: [] });
          emit('response.content_part.done', { item_id, output_index, content_index, part });
        });
        break;
    }
    emit('response.output_item.done', { output_index, item });
  });
  emit(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  return events;
}

/** A stream that fails after two text deltas: an `error` event, then `response.failed`. */
function failingEvents(response: Obj): string[] {
  const { events, emit } = eventWriter();
  const pending = pendingResponse(response);
  const item_id = openAIId('msg');
  emit('response.created', { response: pending });
  emit('response.in_progress', { response: pending });
  emit('response.output_item.added', { output_index: 0, item: { id: item_id, type: 'message', status: 'in_progress', content: [], role: 'assistant' } });
  const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
  emit('response.content_part.added', { item_id, output_index: 0, content_index: 0, part });
  for (const delta of ['partial ', 'answer']) emit('response.output_text.delta', { item_id, output_index: 0, content_index: 0, delta, logprobs: [] });
  emit('error', { code: 'server_error', message: serverErrorMessage, param: null });
  emit('response.failed', { response: { ...pending, status: 'failed', error: { code: 'server_error', message: serverErrorMessage } } });
  return events;
}
