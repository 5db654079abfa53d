/**
 * What the OpenAI-format fakes (chat completions in fake-upstream.ts, the Responses API in
 * openai-responses.ts) answer alike: token counts, stream pieces, OpenAI's error body, and the tool
 * calls and JSON a request asks for.
 */

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Token estimate used for `usage`: ceil(chars / 4), at least 1 for non-empty text. */
export function fakeTokenCount(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Splits `text` into at most `n` consecutive pieces (by code point); exactly `n` when it has ≥ n code points. */
export function splitPieces(text: string, n: number): string[] {
  const cps = Array.from(text);
  if (cps.length === 0) return [''];
  const count = Math.min(n, cps.length);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const a = Math.floor((i * cps.length) / count);
    const b = Math.floor(((i + 1) * cps.length) / count);
    out.push(cps.slice(a, b).join(''));
  }
  return out;
}

const STATUS_ERRORS: Record<number, [type: string, code: string | null, message: string]> = {
  400: ['invalid_request_error', null, 'Bad request (fake upstream).'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided (fake upstream).'],
  403: ['permission_denied', 'unsupported_country_region_territory', 'Forbidden (fake upstream).'],
  404: ['invalid_request_error', 'model_not_found', 'The model does not exist or you do not have access to it (fake upstream).'],
  409: ['invalid_request_error', null, 'Conflict (fake upstream).'],
  422: ['invalid_request_error', null, 'Unprocessable entity (fake upstream).'],
  429: ['requests', 'rate_limit_exceeded', 'Rate limit reached for requests (fake upstream). Please try again in 1s.'],
  500: ['server_error', null, 'The server had an error while processing your request (fake upstream).'],
  502: ['server_error', null, 'Bad gateway (fake upstream).'],
  503: ['server_error', null, 'The engine is currently overloaded, please try again later (fake upstream).'],
};

export function openAiErrorBody(status: number, message?: string, param: string | null = null): string {
  const known = STATUS_ERRORS[status] ?? [status >= 500 ? 'server_error' : 'invalid_request_error', null, `Error ${status} (fake upstream).`];
  return JSON.stringify({ error: { message: message ?? known[2], type: known[0], param, code: known[1] } });
}

let idCounter = 0;
/** A short id, unique within the process: the fakes' ids of chat completions and tool calls. */
export const nextId = (): string => (++idCounter).toString(36).padStart(8, '0');

/** The text parts of a message content, joined by spaces (a string content as it is). */
export function textOfContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    let s = '';
    for (const p of content) {
      if (isObj(p) && typeof p.text === 'string') s += (s ? ' ' : '') + p.text;
    }
    return s;
  }
  return '';
}

/** A value that satisfies a JSON schema: what the fakes answer for structured output and tool arguments. */
export function sampleFromSchema(schema: unknown, depth = 0): unknown {
  if (!isObj(schema) || depth > 6) return {};
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  if ('const' in schema) return schema.const;
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    const alts = schema[k];
    if (Array.isArray(alts) && alts.length) return sampleFromSchema(alts[0], depth + 1);
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? 'null';
  if (type === undefined && isObj(schema.properties)) type = 'object';
  switch (type) {
    case 'string':
      return 'example';
    case 'integer':
      return 1;
    case 'number':
      return 1.5;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array':
      return [sampleFromSchema(schema.items, depth + 1)];
    case 'object': {
      const out: Obj = {};
      if (isObj(schema.properties)) {
        for (const [k, v] of Object.entries(schema.properties)) out[k] = sampleFromSchema(v, depth + 1);
      }
      return out;
    }
    default:
      return {};
  }
}

export interface PlannedCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * The tool calls a chat request gets, if any: a named `tool_choice`, `required` (or `any`), or the
 * last user text saying "call a tool" (the first tool) or "call all tools"; none with `tool_choice: "none"`.
 */
export function planToolCalls(body: Obj, lastUserText: string): PlannedCall[] | null {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return null;
  const tools = (body.tools as unknown[]).filter(
    (t): t is { function: { name: string; parameters?: unknown } } => isObj(t) && isObj(t.function) && typeof t.function.name === 'string',
  );
  const tc = body.tool_choice;
  if (tc === 'none') return null;
  const mk = (name: string, parameters: unknown): PlannedCall => ({
    id: 'call_' + ('fake' + nextId()).padStart(24, '0'),
    name,
    arguments: JSON.stringify(sampleFromSchema(parameters ?? { type: 'object', properties: {} })),
  });
  if (isObj(tc) && isObj(tc.function) && typeof tc.function.name === 'string') {
    const name = tc.function.name;
    const tool = tools.find((t) => t.function.name === name);
    return [mk(name, tool?.function.parameters)];
  }
  if (tools.length === 0) return null;
  const lower = lastUserText.toLowerCase();
  if (lower.includes('call all tools')) return tools.map((t) => mk(t.function.name, t.function.parameters));
  if (tc === 'required' || tc === 'any' || lower.includes('call a tool')) return [mk(tools[0].function.name, tools[0].function.parameters)];
  return null;
}
