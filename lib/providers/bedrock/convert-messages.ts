import { badRequest } from '../../core/errors';
import { parseToolArguments, textOf } from '../openai-format/request-helpers';
import type { ChatMessage, ContentPart } from '../openai-format/types';
import type { ContentBlock, Message, SystemBlock } from './api';
import { documentBlock, imageBlock } from './media';

export interface ConvertedMessages {
  system: SystemBlock[];
  messages: Message[];
  /** Tool names the conversation's assistant turns called (Bedrock needs a toolConfig naming them). */
  toolNames: Set<string>;
  hasToolBlocks: boolean;
}

const cachePoint: ContentBlock = { cachePoint: { type: 'default' } };

/**
 * OpenAI chat messages → Converse `system` and `messages`.
 * - system/developer messages → `system[].text`, wherever they stand;
 * - user text, images and files → text, image and document blocks;
 * - assistant text and `tool_calls` → text and `toolUse{toolUseId, name, input}` blocks (thinking
 *   blocks from `content_blocks` first, when strict API compliance is off, so signed reasoning
 *   round-trips);
 * - `tool` messages → `toolResult{toolUseId, content:[{text}]}` in a user turn. The result stays
 *   text (exactly what the client sent) because every tool-capable Bedrock model takes text results,
 *   while JSON results are not accepted by all of them.
 * Consecutive turns of one role are merged (tool results and a following user message included),
 * since Converse wants user and assistant turns to alternate. Blank text blocks are left out: Bedrock
 * rejects them. A part's `cache_control` (the Anthropic-style extension) becomes a cache point after it.
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html
 */
export async function convertMessages(input: ChatMessage[], strict: boolean): Promise<ConvertedMessages> {
  const result: ConvertedMessages = { system: [], messages: [], toolNames: new Set(), hasToolBlocks: false };
  const documentNames = new Set<string>();
  for (let index = 0; index < input.length; index++) {
    const message = input[index];
    const where = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const block of systemBlocks(message.content)) result.system.push(block);
        break;
      case 'user':
        append(result.messages, 'user', await userBlocks(message.content, where, documentNames), where);
        break;
      case 'assistant':
        append(result.messages, 'assistant', assistantBlocks(message, where, strict, result), where);
        break;
      case 'tool': {
        if (typeof message.tool_call_id !== 'string' || !message.tool_call_id) {
          throw badRequest(
            `${where}.tool_call_id is required: the id of the tool call this message answers.`,
            `${where}.tool_call_id`,
            'missing_required_parameter',
          );
        }
        const text = textOf(message.content);
        result.hasToolBlocks = true;
        append(result.messages, 'user', [{ toolResult: { toolUseId: message.tool_call_id, content: text ? [{ text }] : [] } }], where);
        break;
      }
      default:
        throw badRequest(
          `${where}.role "${(message as { role: string }).role}" is not supported for Bedrock; use system, developer, user, assistant or tool (function messages are replaced by tool messages).`,
          `${where}.role`,
          'invalid_role',
        );
    }
  }
  return result;
}

function append(messages: Message[], role: Message['role'], content: ContentBlock[], where: string): void {
  if (content.length === 0) {
    // An assistant turn with nothing to say is left out; a user turn without content is a mistake.
    if (role === 'user')
      throw badRequest(`${where} has no content: Bedrock needs text, an image or a file in every user message.`, `${where}.content`, 'empty_message');
    return;
  }
  const last = messages.at(-1);
  if (last?.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

function systemBlocks(content: string | ContentPart[] | null | undefined): SystemBlock[] {
  if (typeof content === 'string' || content == null) return content ? [{ text: content }] : [];
  const blocks: SystemBlock[] = [];
  for (const part of content) {
    if (part.type === 'text' && part.text) blocks.push({ text: part.text });
    if (hasCacheControl(part)) blocks.push(cachePoint as SystemBlock);
  }
  return blocks;
}

async function userBlocks(content: string | ContentPart[], where: string, documentNames: Set<string>): Promise<ContentBlock[]> {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) throw badRequest(`${where}.content must be a string or an array of content parts.`, `${where}.content`, 'invalid_type');
  const blocks: ContentBlock[] = [];
  for (let index = 0; index < content.length; index++) {
    const part = content[index];
    const partWhere = `${where}.content[${index}]`;
    switch (part?.type) {
      case 'text':
        if (part.text) blocks.push({ text: part.text });
        break;
      case 'image_url':
        if (typeof part.image_url?.url !== 'string')
          throw badRequest(`${partWhere}.image_url.url is required.`, `${partWhere}.image_url.url`, 'missing_required_parameter');
        blocks.push(await imageBlock(part.image_url.url, `${partWhere}.image_url.url`));
        break;
      case 'file':
        blocks.push(documentBlock(part.file, partWhere, documentNames));
        break;
      default:
        throw badRequest(
          `${partWhere}: content parts of type "${(part as { type?: string })?.type}" are not supported for Bedrock; use text, image_url or file.`,
          `${partWhere}.type`,
          'unsupported_content_type',
        );
    }
    if (hasCacheControl(part)) blocks.push(cachePoint);
  }
  return blocks;
}

function assistantBlocks(message: Extract<ChatMessage, { role: 'assistant' }>, where: string, strict: boolean, result: ConvertedMessages): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  const contentBlocks = !strict && Array.isArray(message.content_blocks) ? (message.content_blocks as Array<Record<string, unknown>>) : undefined;
  if (contentBlocks) {
    for (const block of contentBlocks) {
      if (block?.type === 'thinking' && typeof block.thinking === 'string') {
        const reasoningText: { text: string; signature?: string } = { text: block.thinking };
        if (typeof block.signature === 'string') reasoningText.signature = block.signature;
        blocks.push({ reasoningContent: { reasoningText } });
      } else if (block?.type === 'redacted_thinking' && typeof block.data === 'string') {
        blocks.push({ reasoningContent: { redactedContent: block.data } });
      } else if (block?.type === 'text' && typeof block.text === 'string' && block.text) {
        blocks.push({ text: block.text });
      }
    }
  }
  // content_blocks carry the text too when present; otherwise the text is the message content.
  const text = contentBlocks?.some((block) => block?.type === 'text') ? '' : textOf(message.content);
  if (text) blocks.push({ text });
  (message.tool_calls ?? []).forEach((call, index) => {
    const callWhere = `${where}.tool_calls[${index}]`;
    if (!call?.id || typeof call.function?.name !== 'string') {
      throw badRequest(`${callWhere} needs an id and function.name.`, callWhere, 'invalid_tool_call');
    }
    const input = parseToolArguments(call.function.arguments ?? '', `${callWhere}.function.arguments`);
    blocks.push({ toolUse: { toolUseId: call.id, name: call.function.name, input } });
    result.toolNames.add(call.function.name);
    result.hasToolBlocks = true;
  });
  return blocks;
}

function hasCacheControl(part: unknown): boolean {
  return typeof part === 'object' && part !== null && (part as { cache_control?: unknown }).cache_control != null;
}
