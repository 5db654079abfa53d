/**
 * A Responses API request as an OpenAI chat-completions request, the format every adapter of the
 * gateway reads. What the chat format cannot carry (built-in tools, their call items, images by
 * file id) is refused with a 400 naming the field rather than dropped, since the answer would be
 * silently different from OpenAI's.
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
import { badRequest } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ResponseFormat, TextPart, ToolCall, ToolChoice } from '../openai-format/types';
import type { ConversationItem, ResponsesRequest } from './types';

/**
 * `history` is the conversation of `previous_response_id` (earlier inputs and outputs, in order);
 * this request's `input` follows it. Only this request's `instructions` apply, as at OpenAI.
 */
export function toChatRequest(request: ResponsesRequest, history: ConversationItem[]): ChatRequest {
  const messages: ChatMessage[] = [];
  // An empty system message says nothing, and some providers refuse empty text.
  if (typeof request.instructions === 'string' && request.instructions !== '') messages.push({ role: 'system', content: request.instructions });
  messages.push(...conversationMessages([...historyPlaces(history), ...inputPlaces(request.input)]));
  if (!messages.some((message) => message.role !== 'system')) {
    throw badRequest(
      'input is required: a string, or an array of input items such as [{"role":"user","content":"Hello"}].',
      'input',
      'missing_required_parameter',
    );
  }
  const chat: ChatRequest = { model: request.model, messages };
  copyTools(request, chat);
  copyTextFormat(request, chat);
  copySampling(request, chat);
  return chat;
}

// ---- where an item stands, for errors

/** An item and how an error names it: `input[3]`, or its place in the previous responses' conversation. */
interface Placed {
  item: unknown;
  path: string;
  fromHistory: boolean;
}

function inputPlaces(input: ResponsesRequest['input']): Placed[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') return [{ item: { type: 'message', role: 'user', content: input }, path: 'input', fromHistory: false }];
  if (!Array.isArray(input)) throw badRequest('input must be a string or an array of input items.', 'input', 'invalid_type');
  return input.map((item, index) => ({ item, path: `input[${index}]`, fromHistory: false }));
}

function historyPlaces(history: ConversationItem[]): Placed[] {
  return history.map((item, index) => ({ item, path: `item ${index} of the conversation of previous_response_id`, fromHistory: true }));
}

/** A 400 about `suffix` of a placed item; history items are named by `previous_response_id`, the caller's only handle on them. */
function itemError(at: Placed, suffix: string, message: (name: string) => string, code: string) {
  const name = at.fromHistory ? `${at.path}${suffix ? ` (${suffix.replace(/^\./, '')})` : ''}` : `${at.path}${suffix}`;
  return badRequest(message(name), at.fromHistory ? 'previous_response_id' : `${at.path}${suffix}`, code);
}

function requiredString(at: Placed, item: Record<string, unknown>, field: string): string {
  const value = item[field];
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) {
    throw itemError(at, `.${field}`, (name) => `${name} is required in a ${String(item.type)} item.`, 'missing_required_parameter');
  }
  throw itemError(at, `.${field}`, (name) => `${name} must be a string.`, 'invalid_type');
}

// ---- the conversation

function conversationMessages(places: Placed[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  // The assistant message function calls join: the chat format has one assistant turn carrying
  // text and every tool call, where the Responses API lists them as separate items.
  let openAssistant: Extract<ChatMessage, { role: 'assistant' }> | null = null;
  for (const at of places) {
    const item = at.item;
    if (!isPlainObject(item))
      throw itemError(at, '', (name) => `${name} must be an input item object such as {"role":"user","content":"Hello"}.`, 'invalid_type');
    // A message may leave out its type (OpenAI's "easy input message").
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const message = messageOf(at, item);
        messages.push(message);
        openAssistant = message.role === 'assistant' ? message : null;
        break;
      }
      case 'function_call': {
        const call = toolCallOf(at, item);
        if (openAssistant === null) {
          openAssistant = { role: 'assistant', content: null, tool_calls: [] };
          messages.push(openAssistant);
        }
        (openAssistant.tool_calls ??= []).push(call);
        break;
      }
      case 'function_call_output':
        messages.push({ role: 'tool', tool_call_id: requiredString(at, item, 'call_id'), content: toolOutputOf(at, item.output) });
        openAssistant = null;
        break;
      case 'reasoning':
        // The chat format has no place for reasoning; dropping it keeps the calls around it together.
        break;
      case undefined:
        throw itemError(
          at,
          '.type',
          (name) => `${name} is required: "message", "function_call", "function_call_output" or "reasoning".`,
          'missing_required_parameter',
        );
      default:
        // A built-in tool's call in an earlier response (made natively): what it found is in the
        // answer after it, which goes on; the call itself has no chat form.
        if (at.fromHistory) break;
        throw itemError(
          at,
          '.type',
          (name) =>
            `${name} "${String(type)}" is supported only at providers that run OpenAI's Responses API natively (openai or azure-openai); through the chat format, send messages, function_call and function_call_output items.`,
          'unsupported_input_item',
        );
    }
  }
  return messages;
}

const roles = new Set(['user', 'system', 'developer', 'assistant']);

function messageOf(at: Placed, item: Record<string, unknown>): ChatMessage {
  const role = item.role;
  if (typeof role !== 'string' || !roles.has(role)) {
    throw itemError(
      at,
      '.role',
      (name) => `${name} must be one of user, system, developer, assistant.`,
      role === undefined ? 'missing_required_parameter' : 'invalid_value',
    );
  }
  const content = item.content;
  if (typeof content !== 'string' && !Array.isArray(content)) {
    throw itemError(
      at,
      '.content',
      (name) => `${name} must be a string or an array of content parts such as [{"type":"input_text","text":"Hello"}].`,
      'invalid_type',
    );
  }
  if (role === 'assistant') return { role, content: typeof content === 'string' ? content : assistantText(at, content) };
  if (typeof content === 'string') return { role: role as 'user' | 'system' | 'developer', content };
  if (role === 'user') return { role, content: content.map((part, index) => userPart(at, `.content[${index}]`, part)) };
  return { role: role as 'system' | 'developer', content: content.map((part, index) => textPart(at, `.content[${index}]`, part, `${role} messages`)) };
}

function partType(at: Placed, suffix: string, part: unknown): string {
  if (isPlainObject(part) && typeof part.type === 'string') return part.type;
  throw itemError(at, suffix, (name) => `${name} must be a content part such as {"type":"input_text","text":"Hello"}.`, 'invalid_content');
}

function partText(at: Placed, suffix: string, part: Record<string, unknown>, field: string): string {
  if (typeof part[field] === 'string') return part[field];
  throw itemError(at, `${suffix}.${field}`, (name) => `${name} must be a string.`, 'invalid_content');
}

/** Parts that can only be text where they stand (system messages, tool results). */
function textPart(at: Placed, suffix: string, part: unknown, where: string): TextPart {
  const type = partType(at, suffix, part);
  if (type !== 'input_text') {
    throw itemError(
      at,
      `${suffix}.type`,
      (name) => `${name} "${type}" cannot be sent in ${where} through the chat format; only input_text parts can.`,
      'unsupported_content',
    );
  }
  return { type: 'text', text: partText(at, suffix, part as Record<string, unknown>, 'text') };
}

function userPart(at: Placed, suffix: string, part: unknown): ContentPart {
  const type = partType(at, suffix, part);
  const fields = part as Record<string, unknown>;
  switch (type) {
    case 'input_text':
      return { type: 'text', text: partText(at, suffix, fields, 'text') };
    case 'input_image':
      return imagePart(at, suffix, fields);
    case 'input_file':
      return filePart(at, suffix, fields);
    default:
      throw itemError(
        at,
        `${suffix}.type`,
        (name) => `${name} "${type}" is not a user content part; send input_text, input_image or input_file.`,
        'invalid_content',
      );
  }
}

function imagePart(at: Placed, suffix: string, part: Record<string, unknown>): ContentPart {
  if (typeof part.image_url === 'string') {
    const detail = part.detail;
    const image: { url: string; detail?: 'auto' | 'low' | 'high' } = { url: part.image_url };
    if (detail === 'auto' || detail === 'low' || detail === 'high') image.detail = detail;
    return { type: 'image_url', image_url: image };
  }
  // A file id names a file in OpenAI's file store, which the chat format's image parts cannot reference.
  if (typeof part.file_id === 'string') {
    throw itemError(
      at,
      suffix,
      (name) =>
        `${name} is an input_image with only a file_id, which the chat format cannot carry: send image_url with the image's URL or a data URL (data:image/png;base64,…).`,
      'unsupported_content',
    );
  }
  throw itemError(
    at,
    `${suffix}.image_url`,
    (name) => `${name} is required in an input_image part: the image's URL or a data URL.`,
    'missing_required_parameter',
  );
}

function filePart(at: Placed, suffix: string, part: Record<string, unknown>): ContentPart {
  const filename = typeof part.filename === 'string' ? part.filename : undefined;
  if (typeof part.file_data === 'string')
    return { type: 'file', file: filename === undefined ? { file_data: part.file_data } : { file_data: part.file_data, filename } };
  if (typeof part.file_id === 'string') return { type: 'file', file: { file_id: part.file_id } };
  if (typeof part.file_url === 'string') {
    throw itemError(
      at,
      `${suffix}.file_url`,
      (name) => `${name} cannot be sent through the chat format: send file_data (a base64 data URL) or file_id.`,
      'unsupported_content',
    );
  }
  throw itemError(at, suffix, (name) => `${name} is an input_file without file_data or file_id.`, 'missing_required_parameter');
}

/** An assistant turn as one text: the chat format's assistant content is text only. */
function assistantText(at: Placed, content: unknown[]): string {
  return content
    .map((part, index) => {
      const suffix = `.content[${index}]`;
      const type = partType(at, suffix, part);
      const fields = part as Record<string, unknown>;
      if (type === 'output_text' || type === 'input_text') return partText(at, suffix, fields, 'text');
      if (type === 'refusal') return partText(at, suffix, fields, 'refusal');
      throw itemError(
        at,
        `${suffix}.type`,
        (name) => `${name} "${type}" cannot be sent in an assistant message; send output_text or refusal.`,
        'invalid_content',
      );
    })
    .join('');
}

function toolCallOf(at: Placed, item: Record<string, unknown>): ToolCall {
  return {
    id: requiredString(at, item, 'call_id'),
    type: 'function',
    function: { name: requiredString(at, item, 'name'), arguments: requiredString(at, item, 'arguments') },
  };
}

function toolOutputOf(at: Placed, output: unknown): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) {
    throw itemError(at, '.output', (name) => `${name} is required in a function_call_output item: a string or an array of input_text parts.`, 'invalid_type');
  }
  return output.map((part, index) => textPart(at, `.output[${index}]`, part, 'function_call_output items').text).join('');
}

// ---- tools

function copyTools(request: ResponsesRequest, chat: ChatRequest): void {
  if (request.tools !== undefined && request.tools !== null) {
    if (!Array.isArray(request.tools)) throw badRequest('tools must be an array of tools.', 'tools', 'invalid_type');
    // OpenAI's chat API refuses an empty tools array, where the Responses API accepts one.
    if (request.tools.length > 0) chat.tools = request.tools.map((tool, index) => functionTool(tool, `tools[${index}]`));
  }
  if (request.tool_choice !== undefined && request.tool_choice !== null) chat.tool_choice = toolChoice(request.tool_choice);
  if (typeof request.parallel_tool_calls === 'boolean') chat.parallel_tool_calls = request.parallel_tool_calls;
}

function functionTool(tool: unknown, param: string): FunctionTool {
  if (!isPlainObject(tool))
    throw badRequest(`${param} must be a tool such as {"type":"function","name":"get_weather","parameters":{"type":"object"}}.`, param, 'invalid_type');
  if (tool.type !== 'function') {
    throw badRequest(
      `${param}.type "${String(tool.type)}" is a built-in tool of OpenAI's Responses API: it needs a provider that runs that API natively (openai or azure-openai). Other providers take function tools.`,
      `${param}.type`,
      'unsupported_tool',
    );
  }
  if (typeof tool.name !== 'string' || tool.name === '')
    throw badRequest(`${param}.name is required in a function tool.`, `${param}.name`, 'missing_required_parameter');
  const fn: FunctionTool['function'] = { name: tool.name };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.parameters !== undefined && tool.parameters !== null) {
    if (!isPlainObject(tool.parameters)) throw badRequest(`${param}.parameters must be a JSON Schema object.`, `${param}.parameters`, 'invalid_type');
    fn.parameters = tool.parameters;
  }
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

function toolChoice(choice: unknown): ToolChoice {
  if (choice === 'none' || choice === 'auto' || choice === 'required') return choice;
  if (isPlainObject(choice) && choice.type === 'function') {
    if (typeof choice.name !== 'string')
      throw badRequest('tool_choice.name is required: the function to call.', 'tool_choice.name', 'missing_required_parameter');
    return { type: 'function', function: { name: choice.name } };
  }
  const what = isPlainObject(choice) ? `{"type":"${String(choice.type)}"}` : JSON.stringify(choice);
  throw badRequest(
    `tool_choice ${what} cannot be sent through the chat format: send "none", "auto", "required" or {"type":"function","name":"…"}.`,
    'tool_choice',
    'invalid_tool_choice',
  );
}

// ---- output format and sampling

function copyTextFormat(request: ResponsesRequest, chat: ChatRequest): void {
  const text = request.text;
  if (!isPlainObject(text)) return;
  if (typeof text.verbosity === 'string') chat.verbosity = text.verbosity;
  const format = text.format;
  if (format === undefined || format === null) return;
  const responseFormat = responseFormatOf(format);
  if (responseFormat !== undefined) chat.response_format = responseFormat;
}

function responseFormatOf(format: unknown): ResponseFormat | undefined {
  if (!isPlainObject(format)) throw badRequest('text.format must be an object such as {"type":"json_object"}.', 'text.format', 'invalid_type');
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      if (typeof format.name !== 'string')
        throw badRequest('text.format.name is required in a json_schema format.', 'text.format.name', 'missing_required_parameter');
      if (!isPlainObject(format.schema)) {
        throw badRequest('text.format.schema is required in a json_schema format: a JSON Schema object.', 'text.format.schema', 'missing_required_parameter');
      }
      const schema: Extract<ResponseFormat, { type: 'json_schema' }>['json_schema'] = { name: format.name, schema: format.schema };
      if (typeof format.strict === 'boolean') schema.strict = format.strict;
      if (typeof format.description === 'string') schema.description = format.description;
      return { type: 'json_schema', json_schema: schema };
    }
    default:
      throw badRequest(
        `text.format.type must be "text", "json_object" or "json_schema"; got ${JSON.stringify(format.type)}.`,
        'text.format.type',
        'invalid_value',
      );
  }
}

/** Fields both APIs share under one meaning, passed on only when given. */
const sharedFields = ['temperature', 'top_p', 'user', 'service_tier', 'prompt_cache_key', 'safety_identifier'] as const;

function copySampling(request: ResponsesRequest, chat: ChatRequest): void {
  if (request.max_output_tokens !== undefined && request.max_output_tokens !== null) chat.max_completion_tokens = request.max_output_tokens;
  const body: Record<string, unknown> = chat;
  for (const field of sharedFields) if (request[field] !== undefined && request[field] !== null) body[field] = request[field];
  const effort = request.reasoning?.effort;
  if (typeof effort === 'string') chat.reasoning_effort = effort;
}
