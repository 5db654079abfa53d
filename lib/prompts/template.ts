/**
 * Prompt templates: Mustache without HTML escaping, over a template that is either a JSON list of
 * chat messages or plain text (one user message).
 *
 * A JSON template is parsed first and only the texts inside it are rendered, so a variable whose
 * value holds quotes, newlines or brackets can never break the message list.
 *
 * The `mustache` package parses; the rendering is our own walk of its tokens, because a render runs
 * on a caller's values and an admin's partials: it reads variables as data (own properties only,
 * nothing called), recurses only as deep as the limits below, and stops at an output size and a
 * budget of work, with a 400 that names the limit.
 */
import Mustache from 'mustache';
import { badRequest } from '../core/errors';
import { jsonPath } from '../core/json-path';

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
export const maxPartialDepth = 10;
/** How deep sections may nest in one text; no prompt needs more, and rendering recurses per level. */
export const maxSectionDepth = 50;
/** The most text one render may produce, over all the texts of a template (UTF-8 bytes). */
export const maxRenderBytes = 1024 * 1024;
/**
 * The most work one render may do: tokens visited, section items, context frames searched by
 * lookups and characters of partials parsed. Sections nested over long lists can multiply work that
 * prints nothing, so the output limit alone would not bound it.
 */
export const maxRenderSteps = 1_000_000;

// Mustache's own cache keeps every text it parses for the life of the process, so parsing goes
// through a writer without it and a cache of our own, bounded by the characters it holds. Parsing
// costs about 1 µs a character, and a warm function renders the same saved texts again and again.
// A text checked on its way in is parsed without being kept: a refused one is never rendered, and
// a request that only saves should not fill the cache that renders use.
const parser = new Mustache.Writer();
(parser as unknown as { templateCache: unknown }).templateCache = undefined;
const maxCachedChars = 1024 * 1024;
const parsedTexts = new Map<string, Token[]>();
let cachedChars = 0;

/** Mustache's tokens for a text; shared between renders, so never changed. */
function parse(text: string, remember = true): Token[] {
  const known = parsedTexts.get(text);
  if (known) {
    // Most recently used last, so the oldest is dropped first.
    parsedTexts.delete(text);
    parsedTexts.set(text, known);
    return known;
  }
  const tokens = parser.parse(text) as Token[];
  if (remember && text.length <= maxCachedChars / 4) {
    parsedTexts.set(text, tokens);
    cachedChars += text.length;
    for (const oldest of parsedTexts.keys()) {
      if (cachedChars <= maxCachedChars) break;
      parsedTexts.delete(oldest);
      cachedChars -= oldest.length;
    }
  }
  return tokens;
}

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
  const template: ParsedTemplate = isJson
    ? { kind: 'messages', messages: messageList(parsed, param) }
    : { kind: 'text', messages: [{ role: 'user', content: source }] };
  for (const [index, text] of texts(template).entries())
    checkMustache(text, param, template.kind === 'text' ? param : `${param} (text ${index + 1} of the message list)`);
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

/** `label` says which text of the template it is in messages; `param` stays the body field's path. */
function checkMustache(text: string, param: string, label = param): void {
  let tokens: Token[];
  try {
    tokens = parse(text, false);
  } catch (error) {
    throw badRequest(`${label} is not a valid Mustache template: ${(error as Error).message}.`, param, 'invalid_prompt_template');
  }
  const tooDeep = sectionPastLimit(tokens);
  if (tooDeep) throw sectionsTooDeep(param, tooDeep, label);
}

/** The first section nested past the limit, as its tag (`{{#name}}`); the recursion stops there, so it is bounded. */
function sectionPastLimit(tokens: Token[], depth = 0): string | undefined {
  for (const token of tokens) {
    if (token[0] !== '#' && token[0] !== '^') continue;
    if (depth + 1 > maxSectionDepth) return `{{${token[0]}${token[1].slice(0, 100)}}}`;
    const deeper = sectionPastLimit(token[4] ?? [], depth + 1);
    if (deeper) return deeper;
  }
  return undefined;
}

const sectionsTooDeep = (param: string, section: string, label = param) =>
  badRequest(
    `${label} nests sections more than ${maxSectionDepth} levels deep, at ${section}; the limit is ${maxSectionDepth}. Nest fewer sections inside one another.`,
    param,
    'template_too_deep',
  );

/** Every text of a template that is rendered: string contents and the `text` of text parts. */
function texts(template: ParsedTemplate): string[] {
  const found: string[] = [];
  for (const message of template.messages) {
    if (typeof message.content === 'string') found.push(message.content);
    else if (Array.isArray(message.content))
      for (const part of message.content as Record<string, unknown>[]) if (typeof part.text === 'string') found.push(part.text);
  }
  return found;
}

/** Names of the partials a text includes (`{{>name}}`), at any depth of sections. */
export function partialNames(text: string): string[] {
  const names = new Set<string>();
  // A list of token lists rather than recursion: a text saved before the nesting limit may be deep.
  const pending: Token[][] = [parse(text)];
  for (let tokens = pending.pop(); tokens; tokens = pending.pop()) {
    for (const token of tokens) {
      if (token[0] === '>') names.add(token[1]);
      else if ((token[0] === '#' || token[0] === '^') && token[4]) pending.push(token[4]);
    }
  }
  return [...names];
}

/** Partial names used anywhere in a template. */
export function templatePartialNames(template: ParsedTemplate): string[] {
  return [...new Set(texts(template).flatMap(partialNames))];
}

/** A partial's text by name, never a property every object has (`{{>constructor}}`). */
const partialText = (partials: Record<string, string>, name: string): string | undefined => (Object.hasOwn(partials, name) ? partials[name] : undefined);

export const partialRecursion = (chain: readonly string[], param = 'string') =>
  badRequest(
    `Partial "${chain[0]}" includes itself: ${chain.join(' → ')}. A partial may not include itself, directly or through other partials.`,
    param,
    'partial_recursion',
  );

export const partialChainTooDeep = (chain: readonly string[], param = 'string') =>
  badRequest(
    `Partials include partials ${chain.length} levels deep (${chain.join(' → ')}); the limit is ${maxPartialDepth} levels of partials.`,
    param,
    'partial_chain_too_deep',
  );

const renderTooLarge = () =>
  badRequest(
    `The rendered prompt would be larger than ${maxRenderBytes / (1024 * 1024)} MB (${maxRenderBytes.toLocaleString('en-US')} bytes of text), the limit for one render. Send shorter variables or shorter lists, or include fewer partials.`,
    'variables',
    'prompt_render_too_large',
  );

const renderTooComplex = () =>
  badRequest(
    `Rendering the prompt takes more than ${maxRenderSteps.toLocaleString('en-US')} steps (sections repeated over lists inside one another, or partials included many times), the limit for one render. Send shorter lists, or nest fewer sections over them.`,
    'variables',
    'prompt_render_too_complex',
  );

/**
 * A value as a prompt prints it. Values are data: nothing of theirs is called, so an object with a
 * `toString` or `valueOf` key prints as the JSON it is. Text prints as given, numbers and booleans as
 * JSON writes them, null as nothing (as in Mustache), lists and objects as JSON (Mustache's
 * `[object Object]` and comma-joined lists would tell a model nothing).
 */
export function printable(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (typeof value === 'object') return JSON.stringify(value) ?? '';
  return '';
}

/** Mustache's lookup over own properties only: the nearest context holding the whole dotted name; `.` is the current one. */
function lookup(stack: unknown[], name: string, work: RenderWork): unknown {
  if (name === '.') return stack.at(-1);
  const parts = name.split('.');
  for (let index = stack.length - 1; index >= 0; index--) {
    work.step(parts.length);
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

/** One render's budgets and findings, shared by every text of a template. */
class RenderWork {
  readonly missing = new Set<string>();
  private steps = 0;
  private bytes = 0;
  private readonly parsedPartials = new Map<string, Token[]>();

  constructor(readonly partials: Record<string, string>) {}

  step(count = 1): void {
    this.steps += count;
    if (this.steps > maxRenderSteps) throw renderTooComplex();
  }

  emit(text: string): string {
    // A string's UTF-8 size is at least its length, so a huge one is refused before it is measured.
    this.bytes += text.length > maxRenderBytes ? text.length : Buffer.byteLength(text);
    if (this.bytes > maxRenderBytes) throw renderTooLarge();
    return text;
  }

  /** A partial's tokens, indented as Mustache indents a partial standing alone on its line; parsed once per render and indentation. */
  partialTokens(token: Token, text: string): Token[] {
    const [, name, , , indentation, tagIndex, lineHasNonSpace] = token as unknown as [string, string, number, number, string, number, boolean];
    const indented = tagIndex === 0 && indentation ? indent(text, indentation, lineHasNonSpace) : text;
    const key = `${name}\0${indented === text ? '' : `${indentation}\0${lineHasNonSpace}`}`;
    const known = this.parsedPartials.get(key);
    if (known) return known;
    this.step(indented.length);
    let tokens: Token[];
    try {
      tokens = parse(indented);
    } catch (error) {
      throw badRequest(
        `Partial "${name}" is not a valid Mustache template: ${(error as Error).message}. Fix it with PUT /v1/prompts/partials/${name}.`,
        'string',
        'invalid_prompt_template',
      );
    }
    this.parsedPartials.set(key, tokens);
    return tokens;
  }
}

/** Mustache's indentation of a standalone partial: every line of it gets the tag's indentation. */
function indent(text: string, indentation: string, lineHasNonSpace: boolean): string {
  const spaces = indentation.replace(/[^ \t]/g, '');
  return text
    .split('\n')
    .map((line, index) => (line.length > 0 && (index > 0 || !lineHasNonSpace) ? spaces + line : line))
    .join('\n');
}

/**
 * Renders tokens as Mustache does (sections over lists and objects, inverted sections, partials),
 * over data only: names are looked up among own properties, values printed by `printable`. A
 * variable that would print but is not given renders empty and is noted in `work.missing`.
 */
function renderTokens(tokens: Token[], stack: unknown[], work: RenderWork, partialChain: string[], sectionDepth: number): string {
  let out = '';
  for (const token of tokens) {
    work.step();
    const [type, name] = token;
    if (type === 'text') out += work.emit(name);
    else if (type === 'name' || type === '&') {
      const value = lookup(stack, name, work);
      if (value === undefined) work.missing.add(name);
      else out += work.emit(printable(value));
    } else if (type === '#' || type === '^') {
      if (sectionDepth >= maxSectionDepth) throw sectionsTooDeep('string', `{{${type}${name.slice(0, 100)}}}`);
      const value = lookup(stack, name, work);
      const children = token[4] ?? [];
      if (type === '^') {
        if (!value || (Array.isArray(value) && value.length === 0)) out += renderTokens(children, stack, work, partialChain, sectionDepth + 1);
      } else if (Array.isArray(value)) {
        for (const item of value) {
          work.step();
          stack.push(item);
          out += renderTokens(children, stack, work, partialChain, sectionDepth + 1);
          stack.pop();
        }
      } else if (value && (typeof value === 'object' || typeof value === 'string' || typeof value === 'number')) {
        stack.push(value);
        out += renderTokens(children, stack, work, partialChain, sectionDepth + 1);
        stack.pop();
      } else if (value) {
        out += renderTokens(children, stack, work, partialChain, sectionDepth + 1);
      }
    } else if (type === '>') {
      const text = partialText(work.partials, name);
      if (text === undefined) continue;
      const chain = [...partialChain, name];
      if (partialChain.includes(name)) throw partialRecursion(chain.slice(partialChain.indexOf(name)));
      if (chain.length > maxPartialDepth) throw partialChainTooDeep(chain);
      out += renderTokens(work.partialTokens(token, text), stack, work, chain, 0);
    }
  }
  return out;
}

function renderWith(text: string, variables: Record<string, unknown>, work: RenderWork): string {
  return renderTokens(parse(text), [variables], work, [], 0);
}

/**
 * Variables a text would print but that `variables` does not hold. A name used only as a section
 * or inverted section may be absent (it is empty); names inside a section are looked up as
 * Mustache looks them up (the section's value first, then outward), for every item of a list.
 */
export function missingVariables(text: string, variables: Record<string, unknown>, partials: Record<string, string>): string[] {
  const work = new RenderWork(partials);
  renderWith(text, variables, work);
  return [...work.missing];
}

/** Renders one text: no HTML escaping, the partials given by name, within one render's limits. */
export function renderText(text: string, variables: Record<string, unknown>, partials: Record<string, string>): string {
  return renderWith(text, variables, new RenderWork(partials));
}

/**
 * The template's messages with every text rendered. Variables the template prints but that were
 * not given are a 400 naming them all; partials it includes but that do not exist are a 400 too.
 * All texts share one render's limits: at most `maxRenderBytes` of text and `maxRenderSteps` of work.
 */
export function renderMessages(template: ParsedTemplate, variables: Record<string, unknown>, partials: Record<string, string>): TemplateMessage[] {
  const unknownPartials = allPartialNames(template, partials).filter((name) => partialText(partials, name) === undefined);
  if (unknownPartials.length > 0) {
    throw badRequest(
      `The template includes partials that do not exist in this workspace: ${unknownPartials.join(', ')}. Create them with POST /v1/prompts/partials, or fix the names.`,
      'string',
      'partial_not_found',
    );
  }
  const work = new RenderWork(partials);
  const render = (text: string) => renderWith(text, variables, work);
  const messages = template.messages.map((message) => {
    if (typeof message.content === 'string') return { ...message, content: render(message.content) };
    if (Array.isArray(message.content)) {
      return {
        ...message,
        content: (message.content as Record<string, unknown>[]).map((part) => (typeof part.text === 'string' ? { ...part, text: render(part.text) } : part)),
      };
    }
    return { ...message };
  });
  if (work.missing.size > 0) {
    const names = [...work.missing];
    throw badRequest(
      `The template uses ${names.length === 1 ? 'a variable' : 'variables'} that ${names.length === 1 ? 'was' : 'were'} not given: ${names.join(', ')}. Send ${names.length === 1 ? 'it' : 'them'} in "variables".`,
      // Mustache reads `a.b` as `b` inside `a`: the path is where the value goes in "variables".
      jsonPath('variables', names[0]!.split('.')),
      'missing_variable',
    );
  }
  return messages;
}

/** Partial names the template includes, following the given partials' own includes. */
export function allPartialNames(template: ParsedTemplate, partials: Record<string, string>): string[] {
  const seen = new Set<string>();
  const queue = templatePartialNames(template);
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    const text = partialText(partials, name);
    if (text !== undefined) queue.push(...partialNames(text));
  }
  return [...seen];
}
