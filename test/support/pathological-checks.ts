/**
 * Inputs shaped to cost a guardrail check the most, shared by the unit tests, the integration
 * tests, the fuzz run and `npm run bench:checks`, so each measures the same worst cases.
 */

/** `$defs` where each level offers two references to the next: 2^levels subschemas once expanded. */
export function doublingSchema(levels: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let level = 0; level < levels; level++) $defs[`d${level}`] = { anyOf: [{ $ref: `#/$defs/d${level + 1}` }, { $ref: `#/$defs/d${level + 1}` }] };
  $defs[`d${levels}`] = { type: 'number' };
  return { $ref: '#/$defs/d0', $defs };
}

/** A schema that tries each level of nested arrays twice: the work doubles per level of the data, not the schema. */
export const recursiveTwice = {
  $defs: {
    node: {
      anyOf: [
        { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 0 },
        { type: 'array', items: { $ref: '#/$defs/node' } },
      ],
    },
  },
  $ref: '#/$defs/node',
};

/** `depth` arrays nested around one string, as JSON text. */
export const nestedArrays = (depth: number) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;

/** A JSON array of `count` distinct objects. */
export const manyObjects = (count: number) => JSON.stringify(Array.from({ length: count }, (_, index) => ({ id: index })));
