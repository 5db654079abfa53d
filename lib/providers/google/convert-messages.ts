import { badRequest } from '../../core/errors';
import { parseToolArguments, textOf, toolNamesById } from '../openai-format/request-helpers';
import type { ChatMessage, ContentPart, ToolCall } from '../openai-format/types';
import type { GeminiContent, GeminiPart } from './api';
import { audioPart, filePart, imagePart } from './media';
import { thoughtSignatureOf, unknownThoughtSignature } from './tool-call-id';

export interface GeminiPrompt {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
}

/**
 * OpenAI messages as Gemini `contents` (roles `user` and `model` only) and a `systemInstruction`.
 * Tool results go back as `functionResponse` parts in a user turn, named after the call they answer;
 * consecutive turns of the same role are merged, which also puts parallel tool results in one turn.
 * @see https://ai.google.dev/gemini-api/docs/function-calling
 */
export function convertMessages(messages: ChatMessage[]): GeminiPrompt {
  const toolNames = toolNamesById(messages);
  const system: Array<{ text: string }> = [];
  const contents: GeminiContent[] = [];
  const add = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  messages.forEach((message, index) => {
    const where = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const text = textOf(message.content);
        if (text) system.push({ text });
        break;
      }
      case 'user':
        add('user', userParts(message.content, where));
        break;
      case 'assistant':
        add('model', modelParts(message, where));
        break;
      case 'tool': {
        const name = toolNames.get(message.tool_call_id);
        if (!name) {
          throw badRequest(
            `${where}.tool_call_id "${message.tool_call_id}" answers no tool call of an earlier assistant message; Gemini needs the function's name.`,
            `${where}.tool_call_id`,
            'unknown_tool_call_id',
          );
        }
        add('user', [{ functionResponse: { name, response: toolResponse(textOf(message.content)) } }]);
        break;
      }
      case 'function':
        add('user', [{ functionResponse: { name: message.name, response: toolResponse(message.content ?? '') } }]);
        break;
      default:
        throw badRequest(
          `${where}.role "${(message as { role: string }).role}" is not one of system, developer, user, assistant, tool.`,
          `${where}.role`,
          'invalid_message',
        );
    }
  });

  if (contents.length === 0) {
    throw badRequest('messages needs at least one user or assistant message: Gemini does not accept a system prompt alone.', 'messages', 'invalid_message');
  }
  return system.length ? { contents, systemInstruction: { parts: system } } : { contents };
}

function userParts(content: string | ContentPart[], where: string): GeminiPart[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) throw badRequest(`${where}.content must be a string or an array of content parts.`, `${where}.content`, 'invalid_message');
  return content.map((part, index): GeminiPart => {
    const partWhere = `${where}.content[${index}]`;
    switch (part?.type) {
      case 'text':
        return { text: part.text };
      case 'image_url':
        return imagePart(part, partWhere);
      case 'file':
        return filePart(part, partWhere);
      case 'input_audio':
        return audioPart(part, partWhere);
      default:
        throw badRequest(
          `${partWhere}.type "${(part as { type?: string })?.type}" is not supported for Gemini (text, image_url, file, input_audio).`,
          `${partWhere}.type`,
          'invalid_content_part',
        );
    }
  });
}

function modelParts(message: Extract<ChatMessage, { role: 'assistant' }>, where: string): GeminiPart[] {
  const parts: GeminiPart[] = [];
  const text = textOf(message.content);
  if (text) parts.push({ text });
  const calls: ToolCall[] = message.tool_calls ?? [];
  let signed = false;
  calls.forEach((call, index) => {
    const args = parseToolArguments(call.function?.arguments ?? '', `${where}.tool_calls[${index}].function.arguments`);
    const part: GeminiPart = { functionCall: { name: call.function.name, args } };
    const signature = thoughtSignatureOf(call.id);
    if (signature) {
      part.thoughtSignature = signature;
      signed = true;
    }
    parts.push(part);
  });
  // Of parallel calls only the first is signed; a turn with no signature at all came from elsewhere.
  if (calls.length && !signed) parts.find((part) => part.functionCall)!.thoughtSignature = unknownThoughtSignature;
  return parts;
}

/**
 * A tool's result as the `response` object Gemini wants: a JSON object result as it is, anything
 * else under `output` (the key Google's docs use for a function's output).
 */
function toolResponse(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
    return { output: parsed };
  } catch {
    return { output: text };
  }
}
