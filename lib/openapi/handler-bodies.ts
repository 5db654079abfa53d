/**
 * The bodies of defined routes that read them in their handlers rather than through a schema
 * (multipart forms, and bodies whose refusals follow OpenAI's wording field by field), described
 * by hand beside the code that reads them.
 */
import { uploadPurposes } from '../files/upload-form';

const purpose = { type: 'string', enum: [...uploadPurposes] };

const multipart = (schema: Record<string, unknown>) => ({ required: true, content: { 'multipart/form-data': { schema } } });
const json = (schema: Record<string, unknown>) => ({ required: true, content: { 'application/json': { schema } } });

/** `METHOD path` → requestBody. */
export const handlerBodies: Record<string, unknown> = {
  'POST /v1/files': multipart({
    type: 'object',
    required: ['file', 'purpose'],
    properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' }, purpose },
  }),
  'POST /v1/uploads': json({
    type: 'object',
    required: ['filename', 'purpose', 'bytes', 'mime_type'],
    properties: { filename: { type: 'string', minLength: 1 }, purpose, bytes: { type: 'integer', minimum: 1 }, mime_type: { type: 'string', maxLength: 255 } },
  }),
  'POST /v1/uploads/{uploadId}/parts': multipart({
    type: 'object',
    required: ['data'],
    properties: { data: { type: 'string', contentMediaType: 'application/octet-stream' } },
  }),
  'POST /v1/uploads/{uploadId}/complete': json({
    type: 'object',
    required: ['part_ids'],
    properties: { part_ids: { type: 'array', items: { type: 'string' } }, md5: { type: 'string', pattern: '^[0-9a-fA-F]{32}$' } },
  }),
};
