import { toJSONSchema, type ZodMiniType } from 'zod/mini';

export type JsonSchema = Record<string, unknown>;

/**
 * What a schema accepts, as a JSON Schema (OpenAPI 3.1 takes draft 2020-12 as it is). A check no
 * JSON Schema can say (a `refine`) is left out rather than refused: the document then allows a
 * little more than the gateway does, and the gateway's 400 says the rest. A recursive schema would
 * need `$ref`s into a `$defs` the document does not have, so it stops the generation instead, as
 * does one registered with an id.
 */
export function inputSchema(schema: ZodMiniType): JsonSchema {
  const { $schema: _dialect, ...rest } = toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any', cycles: 'throw' });
  // A schema registered with an id comes out as a `$ref` into `$defs`, which would resolve against the document's root.
  if (rest.$defs) throw new Error(`A schema with an id (${Object.keys(rest.$defs).join(', ')}) cannot be inlined into the OpenAPI document.`);
  return rest;
}
