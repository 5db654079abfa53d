/**
 * Prompt templates: Mustache (the `mustache` package) without HTML escaping, over a template that is
 * either a JSON list of chat messages or plain text (one user message).
 *
 * A JSON template is parsed first and only the texts inside it are rendered, so a variable whose
 * value holds quotes, newlines or brackets can never break the message list.
 */
import Mustache from 'mustache';
import { badRequest } from '../core/errors';

type Token = [type: string, value: string, start: number, end: number, children?: Token[], ...rest: unknown[]];

/** A chat message of a template: its `content` is text or content parts, whose `text` is rendered. */
export type TemplateMessage = Record<string, unknown> & { role: string; content?: unknown };

export interface ParsedTemplate {
  /** Plain text templates become one user message. */
  kind: 'messages' | 'text';
  messages: TemplateMessage[];
}

/** Partial names as templates write them (`{{>name}}`); also the pattern a partial's name must match. */
export const partialNamePattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;

/** How deep partials may include partials: deeper is a loop or a mistake. */
const maxPartialDepth = 10;

/** Prompts are not HTML: a value is inserted as given. */
const renderConfig = { escape: (value: unknown) => String(value) };

/**
 * Reads a template as saved: a JSON message list, or plain text. A `string` that parses as JSON but
 * is not a message list, or any text that is not valid Mustache, is a 400 naming `param`.
 */
export function parseTemplate(source: string, param = 'string'): ParsedTemplate {
  let parsed: unknown;
  let isJson = false;
  try {
    parsed = JSON.parse(source);
    isJson = true;
  } catch {
    // Not JSON: plain text, the single user message.
  }
  const template: ParsedTemplate = isJson ? { kind: 'messages', messages: messageList(parsed, param) } : { kind: 'text', messages: [{ role: 'user', content: source }] };
  for (const [index, text] of texts(template).entries()) checkMustache(text, template.kind === 'text' ? param : `${param} (text ${index + 1} of the message list)`);
  return template;
}

/** Checks a partial's text: it is Mustache, never JSON-parsed (it is spliced into a text). */
export function checkPartialTemplate(source: string, param = 'string'): void {
  checkMustache(source, param);
}

function messageList(value: unknown, param: string): TemplateMessage[] {
  const notList = `${param} parses as JSON but is not a list of chat messages. Send a JSON array such as [{"role":"system","content":"You are {{persona}}"},{"role":"user","content":"{{question}}"}], or plain text for a single user message.`;
  if (!Array.isArray(value) || value.length === 0) throw badRequest(notList, param, 'invalid_prompt_template');
  return value.map((message, index) => {
    if (message === null || typeof message !== 'object' || Array.isArray(message) || typeof (message as TemplateMessage).role !== 'string') {
      throw badRequest(`${notList} Message ${index} has no "role".`, param, 'invalid_prompt_template');
    }
    const content = (message as TemplateMessage).content;
    const validContent =
      content === undefined ||
      content === null ||
      typeof content === 'string' ||
      (Array.isArray(content) && content.every((part) => part !== null && typeof part === 'object' && !Array.isArray(part)));
    if (!validContent) throw badRequest(`${notList} Message ${index}'s content must be text or a list of content parts.`, param, 'invalid_prompt_template');
    return message as TemplateMessage;
  });
}

function checkMustache(text: string, param: string): void {
  try {
    Mustache.parse(text);
  } catch (error) {
    throw badRequest(`${param} is not a valid Mustache template: ${(error as Error).message}.`, param, 'invalid_prompt_template');
  }
}

/** Every text of a template that is rendered: string contents and the `text` of text parts. */
function texts(template: ParsedTemplate): string[] {
  const found: string[] = [];
  for (const message of template.messages) {
    if (typeof message.content === 'string') found.push(message.content);
    else if (Array.isArray(message.content)) for (const part of message.content as Record<string, unknown>[]) if (typeof part.text === 'string') found.push(part.text);
  }
  return found;
}

/** Names of the partials a text includes (`{{>name}}`), at any depth of sections. */
export function partialNames(text: string): string[] {
  const names = new Set<string>();
  const walk = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token[0] === '>') names.add(token[1]);
      if (token[4]) walk(token[4]);
    }
  };
  walk(Mustache.parse(text) as Token[]);
  return [...names];
}

/** Partial names used anywhere in a template. */
export function templatePartialNames(template: ParsedTemplate): string[] {
  return [...new Set(texts(template).flatMap(partialNames))];
}

/**
 * Variables a text would print but that `variables` does not hold. A name used only as a section
 * or inverted section may be absent (it is empty); names inside a section are looked up as
 * Mustache looks them up (the section's value first, then outward), for every item of a list.
 */
export function missingVariables(text: string, variables: Record<string, unknown>, partials: Record<string, string>): string[] {
  const missing = new Set<string>();
  const walk = (tokens: Token[], stack: unknown[], depth: number) => {
    for (const token of tokens) {
      const [type, name] = token;
      if (type === 'name' || type === '&') {
        if (lookup(stack, name) === undefined) missing.add(name);
      } else if (type === '#') {
        const value = lookup(stack, name);
        if (Array.isArray(value)) for (const item of value) walk(token[4] ?? [], [...stack, item], depth);
        else if (value) walk(token[4] ?? [], [...stack, value], depth);
      } else if (type === '^') {
        const value = lookup(stack, name);
        if (!value || (Array.isArray(value) && value.length === 0)) walk(token[4] ?? [], stack, depth);
      } else if (type === '>' && depth < maxPartialDepth && partials[name] !== undefined) {
        walk(Mustache.parse(partials[name]) as Token[], stack, depth + 1);
      }
    }
  };
  walk(Mustache.parse(text) as Token[], [variables], 0);
  return [...missing];
}

/** Mustache's lookup: the nearest context holding the whole dotted name; `.` is the current one. */
function lookup(stack: unknown[], name: string): unknown {
  if (name === '.') return stack.at(-1);
  const parts = name.split('.');
  for (let index = stack.length - 1; index >= 0; index--) {
    let value: unknown = stack[index];
    let hit = true;
    for (const part of parts) {
      if (value !== null && typeof value === 'object' && Object.hasOwn(value, part)) value = (value as Record<string, unknown>)[part];
      else {
        hit = false;
        break;
      }
    }
    if (hit) return value;
  }
  return undefined;
}

/** Renders one text: no HTML escaping, the partials given by name. */
export function renderText(text: string, variables: Record<string, unknown>, partials: Record<string, string>): string {
  return Mustache.render(text, variables, partials, renderConfig);
}

/**
 * The template's messages with every text rendered. Variables the template prints but that were
 * not given are a 400 naming them all; partials it includes but that do not exist are a 400 too.
 */
export function renderMessages(template: ParsedTemplate, variables: Record<string, unknown>, partials: Record<string, string>): TemplateMessage[] {
  const unknownPartials = allPartialNames(template, partials).filter((name) => partials[name] === undefined);
  if (unknownPartials.length > 0) {
    throw badRequest(
      `The template includes partials that do not exist in this workspace: ${unknownPartials.join(', ')}. Create them with POST /v1/prompts/partials, or fix the names.`,
      'string',
      'partial_not_found',
    );
  }
  const missing = new Set(texts(template).flatMap((text) => missingVariables(text, variables, partials)));
  if (missing.size > 0) {
    const names = [...missing];
    throw badRequest(
      `The template uses ${names.length === 1 ? 'a variable' : 'variables'} that ${names.length === 1 ? 'was' : 'were'} not given: ${names.join(', ')}. Send ${names.length === 1 ? 'it' : 'them'} in "variables".`,
      `variables.${names[0]}`,
      'missing_variable',
    );
  }
  const render = (text: string) => renderText(text, variables, partials);
  return template.messages.map((message) => {
    if (typeof message.content === 'string') return { ...message, content: render(message.content) };
    if (Array.isArray(message.content)) {
      return { ...message, content: (message.content as Record<string, unknown>[]).map((part) => (typeof part.text === 'string' ? { ...part, text: render(part.text) } : part)) };
    }
    return { ...message };
  });
}

/** Partial names the template includes, following the given partials' own includes. */
export function allPartialNames(template: ParsedTemplate, partials: Record<string, string>): string[] {
  const seen = new Set<string>();
  const queue = templatePartialNames(template);
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    if (partials[name] !== undefined) queue.push(...partialNames(partials[name]));
  }
  return [...seen];
}
