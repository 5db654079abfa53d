import type { Schema } from '@cfworker/json-schema';
import { isPlainObject } from '../../core/plain-object';
import { CheckParameterError } from '../check-types';
import { defineCheck } from '../define-check';
import { scannedText } from '../limits';
import { fail, requireParameter, stringList } from '../parameters';
import { listVerdict, operatorParameter } from './text';
import { compileSchema, type Draft } from './bounded-schema';
import { stepLimits, WorkBudget } from '../work-budget';

/** Checks on JSON that the text holds: a schema, or the presence of keys. */

const bothSides = ['request', 'response'] as const;
const fence = /```[\w-]*[ \t]*\r?\n([\s\S]*?)```/g;

/**
 * The JSON values a text holds, in the order they are tried: the whole text, each fenced code block,
 * then the stretch from the first `{` to the last `}` ("Here is the result: {…}").
 */
export function jsonCandidates(text: string): unknown[] {
  const found: unknown[] = [];
  const attempt = (source: string) => {
    const trimmed = source.trim();
    if (trimmed === '' || !'{["0123456789-tfn'.includes(trimmed[0])) return;
    try {
      found.push(JSON.parse(trimmed));
    } catch {
      // not JSON: the next candidate may be
    }
  };
  attempt(text);
  if (found.length > 0) return found;
  fence.lastIndex = 0;
  for (let block = fence.exec(text); block; block = fence.exec(text)) attempt(block[1]);
  const open = text.indexOf('{');
  const close = text.lastIndexOf('}');
  if (found.length === 0 && open >= 0 && close > open) attempt(text.slice(open, close + 1));
  return found;
}

const drafts: Record<string, Draft> = {
  'http://json-schema.org/draft-04/schema': '4',
  'http://json-schema.org/draft-06/schema': '7',
  'http://json-schema.org/draft-07/schema': '7',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
};

function schemaParameter(params: Record<string, unknown>): Schema | boolean {
  let schema = requireParameter(params, 'schema', 'a JSON Schema object');
  if (typeof schema === 'string') {
    try {
      schema = JSON.parse(schema);
    } catch {
      throw new CheckParameterError('schema', '`schema` is a string that is not JSON; give the JSON Schema as an object.');
    }
  }
  if (!isPlainObject(schema) && typeof schema !== 'boolean') fail('schema', 'a JSON Schema (an object)', schema);
  return schema as Schema | boolean;
}

export const jsonSchema = defineCheck({
  id: 'default.jsonSchema',
  sides: bothSides,
  invertible: true,
  parameters: ['schema'],
  parse(params) {
    const schema = schemaParameter(params);
    const declared = isPlainObject(schema) && typeof schema.$schema === 'string' ? schema.$schema.replace(/#$/, '') : undefined;
    return { schema: compileSchema(schema, (declared && drafts[declared]) || '2020-12') };
  },
  run({ schema }, input) {
    const candidates = jsonCandidates(scannedText(input.text));
    if (candidates.length === 0) return { verdict: false, data: { explanation: 'The text holds no JSON.' } };
    // One budget for every candidate: a text of many small fenced blocks gets no more work than one block.
    const budget = new WorkBudget('default.jsonSchema', stepLimits.jsonSchema);
    let firstErrors: { instanceLocation: string; keywordLocation: string; error: string }[] = [];
    for (const [index, candidate] of candidates.entries()) {
      const result = schema.validate(candidate, budget);
      if (result.valid) return { verdict: true, data: { explanation: 'The JSON in the text matches the schema.' } };
      if (index === 0)
        firstErrors = result.errors.slice(0, 10).map(({ instanceLocation, keywordLocation, error }) => ({ instanceLocation, keywordLocation, error }));
    }
    return { verdict: false, data: { explanation: 'The JSON in the text does not match the schema.', errors: firstErrors } };
  },
});

export const jsonKeys = defineCheck({
  id: 'default.jsonKeys',
  sides: bothSides,
  invertible: false,
  parameters: ['keys', 'operator'],
  parse: (params) => ({ keys: stringList(params, 'keys', { required: true }), operator: operatorParameter(params, 'any') }),
  run({ keys, operator }, input) {
    const objects = jsonCandidates(scannedText(input.text)).filter(isPlainObject);
    if (objects.length === 0) return { verdict: false, data: { operator, explanation: 'The text holds no JSON object.' } };
    const budget = new WorkBudget('default.jsonKeys', stepLimits.jsonKeys);
    let best: { object: Record<string, unknown>; present: string[]; verdict: boolean } | undefined;
    for (const object of objects) {
      budget.spend(keys.length);
      const present = keys.filter((key) => Object.hasOwn(object, key));
      const verdict = listVerdict(operator, present.length, keys.length);
      if (!best || verdict || present.length > best.present.length) best = { object, present, verdict };
      if (verdict) break;
    }
    const { object, present, verdict } = best!;
    const missing = keys.filter((key) => !Object.hasOwn(object, key));
    return { verdict, data: { operator, present, missing, explanation: `${present.length} of ${keys.length} keys present (operator "${operator}").` } };
  },
});
