/** What the document says of a zod/mini schema, for the kinds the route definitions use. */
import { _default, array, int, nullable, object, optional, pipe, refine, string, transform, enum as oneOf, type ZodMiniObject } from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { knownFields } from '../../lib/http/define-route';
import { inputSchema } from '../../lib/openapi/json-schema';

describe('inputSchema', () => {
  it('closes a knownFields object, whatever its error map says', () => {
    const schema = knownFields({ name: string('name must be a string.') }, (field) => `Unknown field ${field}.`);
    expect(inputSchema(schema)).toEqual({ type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false });
  });

  it('leaves out a refinement it cannot say, and keeps the type it refines', () => {
    expect(inputSchema(string().check(refine((value) => value.trim().length > 0, 'must not be blank')))).toEqual({ type: 'string' });
  });

  it('describes what a client sends: optional and defaulted fields are not required, transforms are their input', () => {
    const schema = object({
      limit: pipe(
        optional(string()),
        transform((value): number => Number(value ?? 20)),
      ),
      role: _default(oneOf(['admin', 'member']), 'member'),
      note: nullable(string()),
      version: int(),
    });
    expect(inputSchema(schema)).toMatchObject({
      properties: {
        limit: { type: 'string' },
        role: { type: 'string', enum: ['admin', 'member'], default: 'member' },
        note: { type: ['string', 'null'] },
        version: { type: 'integer' },
      },
      required: ['note', 'version'],
    });
    expect(inputSchema(schema)).not.toHaveProperty('$schema');
  });

  it('refuses a recursive schema rather than write references the document cannot resolve', () => {
    const node: ZodMiniObject = object({
      name: string(),
      get children() {
        return optional(array(node));
      },
    });
    expect(() => inputSchema(node)).toThrow(/cycle/i);
  });
});
