import { badRequest } from '../../core/errors';
import { parseDataUrl, parseToolArguments, textOf } from '../openai-format/request-helpers';
import type { ChatMessage, ContentPart, FilePart, ImagePart, TextPart } from '../openai-format/types';
import type { CacheControl, DocumentBlock, ImageBlock, MessageParam, RequestBlock, TextBlock } from './api';

/** Media types Anthropic accepts for images. @see https://docs.anthropic.com/en/docs/build-with-claude/vision */
const imageTypes = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export interface ConvertedMessages {
  system?: string | TextBlock[];
  messages: MessageParam[];
}

/**
 * OpenAI chat messages as Anthropic's `system` and alternating user/assistant messages.
 *
 * - system and developer messages, wherever they stand, become the top-level `system` (Anthropic has
 *   no system role inside the conversation);
 * - tool messages become `tool_result` blocks in a user message, so consecutive tool results (and a
 *   user message after them) share one user turn;
 * - assistant `tool_calls` become `tool_use` blocks, their JSON `arguments` parsed;
 * - consecutive messages of the same role are merged, because Anthropic requires alternation;
 * - a message's `name` is dropped: Anthropic has no per-message names.
 * A `cache_control` on an OpenAI content part (an Anthropic extension clients send) is kept.
 * @see https://docs.anthropic.com/en/api/messages#body-messages
 */
export function convertMessages(messages: ChatMessage[]): ConvertedMessages {
  const system: TextBlock[] = [];
  let plainSystem = true;
  const converted: MessageParam[] = [];
  messages.forEach((message, index) => {
    const where = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        if (typeof message.content !== 'string') plainSystem = false;
        for (const block of textBlocks(message.content, where)) system.push(block);
        return;
      case 'user':
        push(converted, 'user', userContent(message.content, where));
        return;
      case 'assistant':
        push(converted, 'assistant', assistantContent(message, where));
        return;
      case 'tool':
        if (typeof message.tool_call_id !== 'string' || !message.tool_call_id) {
          throw badRequest(
            `${where}.tool_call_id is required: the id of the tool call this message answers.`,
            `${where}.tool_call_id`,
            'missing_required_parameter',
          );
        }
        push(converted, 'user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: textOf(message.content) }]);
        return;
      default:
        throw badRequest(
          `${where} has role "${(message as { role: string }).role}", which anthropic does not support; use tools and tool messages instead of the deprecated function role.`,
          `${where}.role`,
          'unsupported_message_role',
        );
    }
  });
  if (converted.length === 0) {
    throw badRequest('anthropic needs at least one user or assistant message besides the system messages.', 'messages', 'invalid_messages');
  }
  const result: ConvertedMessages = { messages: converted };
  if (system.length > 0) result.system = plainSystem && system.length === 1 ? system[0].text : system;
  return result;
}

/** Appends a turn, merging it into the previous one when the role repeats. */
function push(messages: MessageParam[], role: MessageParam['role'], content: string | RequestBlock[]): void {
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last?.role !== role) {
    messages.push({ role, content });
    return;
  }
  last.content = [...asBlocks(last.content), ...asBlocks(content)];
}

function asBlocks(content: string | RequestBlock[]): RequestBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

function cacheControlOf(part: object): CacheControl | undefined {
  return (part as { cache_control?: CacheControl }).cache_control;
}

/** Text parts as text blocks; empty texts are left out (Anthropic rejects empty text blocks). */
function textBlocks(content: string | TextPart[] | null | undefined, where: string): TextBlock[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) throw badRequest(`${where}.content must be a string or an array of content parts.`, `${where}.content`, 'invalid_content');
  const blocks: TextBlock[] = [];
  content.forEach((part, index) => {
    // Assistant messages may carry a refusal part: it is the assistant's text all the same.
    const text =
      part.type === 'text' ? part.text : (part as { type: string; refusal?: string }).type === 'refusal' ? (part as { refusal?: string }).refusal : undefined;
    if (typeof text !== 'string') {
      throw badRequest(`${where}.content[${index}] must be a text part here; got type "${part.type}".`, `${where}.content[${index}]`, 'invalid_content');
    }
    if (text) blocks.push(withCacheControl({ type: 'text', text }, part));
  });
  return blocks;
}

function withCacheControl<Block extends TextBlock | ImageBlock | DocumentBlock>(block: Block, part: object): Block {
  const cacheControl = cacheControlOf(part);
  if (cacheControl) block.cache_control = cacheControl;
  return block;
}

function userContent(content: string | ContentPart[], where: string): string | RequestBlock[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw badRequest(`${where}.content must be a string or an array of content parts.`, `${where}.content`, 'invalid_content');
  return content.map((part, index) => contentBlock(part, `${where}.content[${index}]`));
}

function contentBlock(part: ContentPart, where: string): RequestBlock {
  switch (part?.type) {
    case 'text':
      return withCacheControl({ type: 'text', text: part.text }, part);
    case 'image_url':
      return withCacheControl(imageBlock(part, where), part);
    case 'file':
      return withCacheControl(fileBlock(part, where), part);
    case 'input_audio':
      throw badRequest(`${where}: anthropic does not accept audio input.`, where, 'unsupported_content');
    default:
      throw badRequest(`${where} has an unknown content part type "${(part as { type?: string })?.type}".`, where, 'invalid_content');
  }
}

/** An image URL: fetched by Anthropic when http(s), sent inline when a data URL (a PDF becomes a document). */
function imageBlock(part: ImagePart, where: string): ImageBlock | DocumentBlock {
  const url = part.image_url?.url;
  if (typeof url !== 'string') throw badRequest(`${where}.image_url.url is required.`, `${where}.image_url.url`, 'invalid_content');
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  const data = parseDataUrl(url);
  if (!data) throw badRequest(`${where}.image_url.url must be an http(s) URL or a base64 data URL.`, `${where}.image_url.url`, 'invalid_image_url');
  if (data.mediaType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data.data } };
  return inlineImage(data.mediaType, data.data, `${where}.image_url.url`);
}

function inlineImage(mediaType: string, data: string, where: string): ImageBlock {
  if (!imageTypes.has(mediaType)) {
    throw badRequest(`${where}: anthropic accepts images of type ${[...imageTypes].join(', ')}; got ${mediaType}.`, where, 'unsupported_content');
  }
  return { type: 'image', source: { type: 'base64', media_type: mediaType, data } };
}

/**
 * A file part: PDFs and plain text become `document` blocks, images `image` blocks. A `file_id` is
 * taken to be an Anthropic Files API id (the client must send the `anthropic-beta` header that
 * enables it); OpenAI file ids mean nothing to Anthropic.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/pdf-support
 */
function fileBlock(part: FilePart, where: string): ImageBlock | DocumentBlock {
  const file = part.file ?? {};
  const title = typeof file.filename === 'string' && file.filename ? { title: file.filename } : {};
  if (typeof file.file_data === 'string') {
    const data = parseDataUrl(file.file_data);
    if (!data)
      throw badRequest(
        `${where}.file.file_data must be a base64 data URL such as data:application/pdf;base64,….`,
        `${where}.file.file_data`,
        'invalid_file_data',
      );
    if (data.mediaType === 'application/pdf') return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data.data }, ...title };
    if (data.mediaType === 'text/plain') {
      return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: Buffer.from(data.data, 'base64').toString('utf8') }, ...title };
    }
    if (data.mediaType.startsWith('image/')) return inlineImage(data.mediaType, data.data, `${where}.file.file_data`);
    throw badRequest(
      `${where}.file.file_data: anthropic reads PDF, plain-text and image files; got ${data.mediaType}.`,
      `${where}.file.file_data`,
      'unsupported_content',
    );
  }
  if (typeof file.file_id === 'string' && file.file_id) return { type: 'document', source: { type: 'file', file_id: file.file_id }, ...title };
  throw badRequest(`${where}.file needs file_data (a base64 data URL) or file_id.`, `${where}.file`, 'invalid_content');
}

type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>;

/**
 * Thinking blocks first (Anthropic wants them back unchanged, signature included, before the text and
 * tool use of the same turn), then the text, then one `tool_use` per tool call. When the client sent
 * back `content_blocks` with text in them (a whole non-streamed answer), those blocks are the turn's
 * text and `content` repeats it, so `content` is not added again.
 */
function assistantContent(message: AssistantMessage, where: string): RequestBlock[] {
  const blocks: RequestBlock[] = [];
  let hasText = false;
  if (message.content_blocks != null) {
    if (!Array.isArray(message.content_blocks)) throw badRequest(`${where}.content_blocks must be an array.`, `${where}.content_blocks`, 'invalid_content');
    message.content_blocks.forEach((raw, index) => {
      const block = raw as Record<string, unknown>;
      const at = `${where}.content_blocks[${index}]`;
      if (block?.type === 'thinking' && typeof block.thinking === 'string') {
        blocks.push({ type: 'thinking', thinking: block.thinking, signature: typeof block.signature === 'string' ? block.signature : '' });
      } else if (block?.type === 'redacted_thinking' && typeof block.data === 'string') {
        blocks.push({ type: 'redacted_thinking', data: block.data });
      } else if (block?.type === 'text' && typeof block.text === 'string') {
        hasText = true;
        if (block.text) blocks.push({ type: 'text', text: block.text });
      } else {
        throw badRequest(
          `${at} must be a thinking ({type, thinking, signature}), redacted_thinking ({type, data}) or text ({type, text}) block.`,
          at,
          'invalid_content',
        );
      }
    });
  }
  if (!hasText) blocks.push(...textBlocks(message.content, where));
  (message.tool_calls ?? []).forEach((call, index) => {
    const at = `${where}.tool_calls[${index}]`;
    if (typeof call?.id !== 'string' || typeof call.function?.name !== 'string') {
      throw badRequest(`${at} needs an id and function.name.`, at, 'invalid_tool_call');
    }
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseToolArguments(call.function.arguments ?? '', `${at}.function.arguments`),
    });
  });
  return blocks;
}
