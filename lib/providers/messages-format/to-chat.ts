/**
 * A Messages request as a chat-completions request, for a provider that does not run Anthropic's
 * API: the reverse of the anthropic adapter's mapping, so that the chat request an adapter gets
 * says what the Messages request said.
 *
 * - `system` → a system message first; `messages` → chat messages in order.
 * - User text and images → content parts (a base64 image as a data URL); a PDF document → a file
 *   part; a plain-text document → a text part.
 * - `tool_result` blocks → `tool` messages, before the rest of their user turn (chat wants a tool
 *   call's answer right after it); their images follow in a user message.
 * - Assistant text → `content`; `tool_use` → `tool_calls` (the input as a JSON string); thinking of
 *   earlier turns → `content_blocks`, for providers whose adapters take it back (else left out).
 * - `max_tokens` → `max_completion_tokens`, `stop_sequences` → `stop`, `metadata.user_id` → `user`,
 *   `tools` → function tools, `tool_choice` any → required and tool → a named function,
 *   `disable_parallel_tool_use` → `parallel_tool_calls: false`.
 * - `thinking` as it is for providers that take it, else its budget as a `reasoning_effort`.
 * What only Anthropic runs (its server tools, MCP servers, containers) is a 400 naming it.
 */
import { badRequest } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ToolCall } from '../openai-format/types';
import type { MessageParam, MessagesRequest, RequestBlock } from './types';

export interface ToChatOptions {
  /** The provider's name, for refusals. */
  provider: string;
  /**
   * The provider's adapter reads Anthropic's own fields: `thinking` (and thinking blocks of earlier
   * turns as `content_blocks`) and `top_k`.
   */
  anthropicFields: boolean;
}

/** Fields that stand for work only Anthropic does; a translated request could not honour them. */
const anthropicOnlyFields = ['mcp_servers', 'container', 'context_management'] as const;

/** The largest thinking budget of each effort; anything larger is `high`. */
const effortBudgets: Array<[budget: number, effort: string]> = [
  [4096, 'low'],
  [16384, 'medium'],
];

export function toChatRequest(request: MessagesRequest, options: ToChatOptions): ChatRequest {
  for (const field of anthropicOnlyFields) {
    if (request[field] !== undefined && request[field] !== null) throw onlyAtAnthropic(field, field, options.provider);
  }
  const messages: ChatMessage[] = [];
  const system = systemMessage(request.system, options);
  if (system) messages.push(system);
  request.messages.forEach((message, index) => {
    messages.push(
      ...(message.role === 'user' ? userMessages(message, `messages.${index}`, options) : [assistantMessage(message, `messages.${index}`, options)]),
    );
  });

  const chat: ChatRequest = { model: request.model, messages, max_completion_tokens: request.max_tokens };
  if (request.stop_sequences?.length) chat.stop = request.stop_sequences;
  if (typeof request.temperature === 'number') chat.temperature = request.temperature;
  if (typeof request.top_p === 'number') chat.top_p = request.top_p;
  if (typeof request.top_k === 'number' && options.anthropicFields) chat.top_k = request.top_k;
  const user = request.metadata?.user_id;
  if (typeof user === 'string' && user) chat.user = user;
  addTools(chat, request, options.provider);
  addThinking(chat, request, options.anthropicFields);
  return chat;
}

function onlyAtAnthropic(what: string, param: string, provider: string) {
  return badRequest(
    `${what} is run by Anthropic itself; ${provider} gets this request translated to chat and cannot run it. Send it to an anthropic target.`,
    param,
    'unsupported_parameter',
  );
}

function systemMessage(system: MessagesRequest['system'], options: ToChatOptions): ChatMessage | undefined {
  if (system === undefined || system === null || system.length === 0) return undefined;
  if (typeof system === 'string') return { role: 'system', content: system };
  return { role: 'system', content: system.map((block) => withCacheControl({ type: 'text' as const, text: block.text }, block, options)) };
}

/**
 * A prompt-caching mark travels on the part, where the anthropic-family adapters read it; other
 * providers cache prompts on their own and would refuse a field they do not know.
 */
function withCacheControl<Part extends object>(part: Part, block: object, options: ToChatOptions): Part {
  const mark = (block as { cache_control?: unknown }).cache_control;
  return mark === undefined || !options.anthropicFields ? part : { ...part, cache_control: mark };
}

function userMessages(message: MessageParam, at: string, options: ToChatOptions): ChatMessage[] {
  if (typeof message.content === 'string') return [{ role: 'user', content: message.content }];
  const tools: ChatMessage[] = [];
  const toolImages: ContentPart[] = [];
  const parts: ContentPart[] = [];
  message.content.forEach((block, index) => {
    const where = `${at}.content.${index}`;
    if (block.type === 'tool_result') {
      if (typeof block.tool_use_id !== 'string' || !block.tool_use_id) {
        throw badRequest(`${where}.tool_use_id is required: the id of the tool_use block this result answers.`, `${where}.tool_use_id`, 'invalid_content');
      }
      const { text, images } = toolResultContent(block.content, where);
      tools.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${text}` : text });
      toolImages.push(...images);
      return;
    }
    parts.push(userPart(block, where, options));
  });
  const after = [...toolImages, ...parts];
  return after.length > 0 ? [...tools, { role: 'user', content: after }] : tools;
}

function userPart(block: RequestBlock, where: string, options: ToChatOptions): ContentPart {
  switch (block.type) {
    case 'text':
      return withCacheControl({ type: 'text', text: block.text }, block, options);
    case 'image':
      return withCacheControl(imagePart(block.source, where), block, options);
    case 'document': {
      const source = block.source as unknown;
      if (!isPlainObject(source) || typeof source.type !== 'string') {
        throw badRequest(
          `${where}.source must be a document source such as {"type":"base64","media_type":"application/pdf","data"}.`,
          `${where}.source`,
          'invalid_content',
        );
      }
      if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
        const file: { file_data: string; filename?: string } = { file_data: `data:${source.media_type};base64,${source.data}` };
        if (typeof block.title === 'string' && block.title) file.filename = block.title;
        return withCacheControl({ type: 'file', file }, block, options);
      }
      if (source.type === 'text' && typeof source.data === 'string') return withCacheControl({ type: 'text', text: source.data }, block, options);
      throw badRequest(
        `${where}.source: a ${source.type} document is read by Anthropic itself; ${options.provider} takes documents as base64 data or text.`,
        `${where}.source`,
        'unsupported_content',
      );
    }
    case 'thinking':
    case 'redacted_thinking':
    case 'tool_use':
      throw badRequest(`${where}: a ${block.type} block belongs to an assistant message.`, where, 'invalid_content');
    default:
      throw onlyAtAnthropic(`${where}: a ${(block as { type: string }).type} block`, where, options.provider);
  }
}

function imagePart(source: unknown, where: string): ContentPart {
  if (isPlainObject(source) && source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  }
  if (isPlainObject(source) && source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  throw badRequest(
    `${where}.source must be {"type":"base64","media_type","data"} or {"type":"url","url"} for a translated request.`,
    `${where}.source`,
    'invalid_content',
  );
}

/** A tool result's text (its text blocks joined) and its images, which a chat tool message cannot hold. */
function toolResultContent(content: unknown, where: string): { text: string; images: ContentPart[] } {
  if (content === undefined || content === null) return { text: '', images: [] };
  if (typeof content === 'string') return { text: content, images: [] };
  if (!Array.isArray(content)) throw badRequest(`${where}.content must be a string or a list of text and image blocks.`, `${where}.content`, 'invalid_content');
  const texts: string[] = [];
  const images: ContentPart[] = [];
  content.forEach((block, index) => {
    if (isPlainObject(block) && block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (isPlainObject(block) && block.type === 'image') images.push(imagePart(block.source, `${where}.content.${index}`));
    else throw badRequest(`${where}.content.${index} must be a text or image block.`, `${where}.content.${index}`, 'invalid_content');
  });
  return { text: texts.join('\n'), images };
}

function assistantMessage(message: MessageParam, at: string, options: ToChatOptions): ChatMessage {
  if (typeof message.content === 'string') return { role: 'assistant', content: message.content };
  let text = '';
  const toolCalls: ToolCall[] = [];
  const thinking: unknown[] = [];
  message.content.forEach((block, index) => {
    const where = `${at}.content.${index}`;
    switch (block.type) {
      case 'text':
        text += block.text;
        return;
      case 'tool_use':
        if (typeof block.id !== 'string' || typeof block.name !== 'string')
          throw badRequest(`${where}: a tool_use block needs an id and a name.`, where, 'invalid_content');
        toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
        return;
      case 'thinking':
        if (options.anthropicFields) thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
        return;
      case 'redacted_thinking':
        if (options.anthropicFields) thinking.push({ type: 'redacted_thinking', data: block.data });
        return;
      default:
        throw badRequest(`${where}: an assistant message holds text, tool_use and thinking blocks here; got ${block.type}.`, where, 'invalid_content');
    }
  });
  const assistant: ChatMessage = { role: 'assistant', content: text || (toolCalls.length > 0 ? null : '') };
  if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
  if (thinking.length > 0) assistant.content_blocks = thinking;
  return assistant;
}

function addTools(chat: ChatRequest, request: MessagesRequest, provider: string): void {
  const tools = request.tools ?? [];
  const functions: FunctionTool[] = tools.map((tool, index) => {
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom')
      throw onlyAtAnthropic(`tools.${index}: the ${tool.type} tool`, `tools.${index}`, provider);
    const parameters = tool.input_schema ?? { type: 'object', properties: {} };
    const definition: FunctionTool = { type: 'function', function: { name: tool.name, parameters } };
    if (typeof tool.description === 'string') definition.function.description = tool.description;
    return definition;
  });
  if (functions.length > 0) chat.tools = functions;
  const choice = request.tool_choice;
  if (!choice) return;
  switch (choice.type) {
    case 'auto':
      chat.tool_choice = 'auto';
      break;
    case 'any':
      chat.tool_choice = 'required';
      break;
    case 'none':
      chat.tool_choice = 'none';
      break;
    case 'tool':
      if (typeof (choice as { name?: unknown }).name !== 'string')
        throw badRequest('tool_choice.name is required with type "tool".', 'tool_choice.name', 'invalid_value');
      chat.tool_choice = { type: 'function', function: { name: (choice as { name: string }).name } };
      break;
    default:
      throw badRequest('tool_choice.type must be auto, any, tool or none.', 'tool_choice.type', 'invalid_value');
  }
  if ((choice as { disable_parallel_tool_use?: boolean }).disable_parallel_tool_use === true && functions.length > 0) chat.parallel_tool_calls = false;
}

function addThinking(chat: ChatRequest, request: MessagesRequest, anthropicFields: boolean): void {
  const thinking = request.thinking;
  if (!thinking || thinking.type === 'disabled') return;
  if (anthropicFields) {
    chat.thinking = thinking as ChatRequest['thinking'];
    return;
  }
  const budget = (thinking as { budget_tokens?: unknown }).budget_tokens;
  if (typeof budget !== 'number') return;
  chat.reasoning_effort = effortBudgets.find(([most]) => budget <= most)?.[1] ?? 'high';
}
