import { toJSONSchema, type ZodMiniType } from 'zod/mini';

export type JsonSchema = Record<string, unknown>;

/**
 * What a schema accepts, as a JSON Schema (OpenAPI 3.1 takes draft 2020-12 as it is). A check no
 * JSON Schema can say (a `refine`) is left out rather than refused: the document then allows a
 * little more than the gateway does, and the gateway's 400 says the rest. A recursive schema would
 * need `$ref`s into a `$defs` the document does not have, so it stops the generation instead.
 */
export function inputSchema(schema: ZodMiniType): JsonSchema {
  const { $schema: _dialect, ...rest } = toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any', cycles: 'throw' });
  return rest;
}
