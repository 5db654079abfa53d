import { badRequest, GatewayError } from '../core/errors';
import type { GatewayRequest } from '../http/types';
import { MultipartError, multipartBoundary, parseMultipart, type MultipartPart } from '../wire/multipart';

/** The purposes OpenAI accepts on upload. */
export const uploadPurposes = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
/** Files the gateway writes itself (a batch's output and errors); listed and read like the others, never uploaded. */
export const gatewayWrittenPurposes = ['batch_output', 'fine-tune-results'] as const;
export type FilePurpose = (typeof uploadPurposes)[number] | (typeof gatewayWrittenPurposes)[number];

/** Longer names are refused: a file name is shown back in every listing. */
export const maxFilenameLength = 512;

export interface UploadForm {
  purpose: FilePurpose;
  filename: string;
  /** A view of the request body. */
  bytes: Buffer;
}

/**
 * The `file` and `purpose` fields of a `POST /v1/files` body (multipart/form-data, as OpenAI takes
 * it). Other fields (OpenAI's `expires_after[…]`) are accepted and ignored. Each refusal is a 400
 * naming the field to fix.
 */
export function readUploadForm(request: Pick<GatewayRequest, 'headers' | 'body'>): UploadForm {
  const parts = readFormParts(request, 'a file field and a purpose field');
  const purposePart = parts.find((part) => part.name === 'purpose' && part.filename === undefined);
  const purpose = purposePart?.data.toString('utf8').trim();
  if (purpose === undefined || purpose === '') {
    throw badRequest(`purpose is required: one of ${uploadPurposes.join(', ')}.`, 'purpose', 'missing_required_parameter');
  }
  if (purpose === 'batch_output') {
    throw badRequest(
      'purpose "batch_output" is written by the gateway for a batch\'s results and cannot be uploaded; upload batch input as "batch".',
      'purpose',
      'invalid_purpose',
    );
  }
  if (!(uploadPurposes as readonly string[]).includes(purpose)) {
    throw badRequest(`purpose must be one of ${uploadPurposes.join(', ')}; got ${JSON.stringify(purpose.slice(0, 100))}.`, 'purpose', 'invalid_purpose');
  }

  const filePart = parts.find((part) => part.name === 'file');
  if (!filePart)
    throw badRequest('file is required: the file to upload, as a multipart/form-data file field named "file".', 'file', 'missing_required_parameter');
  if (filePart.filename === undefined) {
    throw badRequest('file must be a file field (with a filename in its Content-Disposition), not a text field.', 'file', 'invalid_file');
  }
  if (filePart.data.length === 0) throw badRequest('file is empty; upload a file with content.', 'file', 'invalid_file');
  const filename = filePart.filename.trim() || 'file';
  if (filename.length > maxFilenameLength) {
    throw badRequest(`file's filename is ${filename.length} characters long; the limit is ${maxFilenameLength}.`, 'file', 'invalid_file');
  }
  return { purpose: purpose as FilePurpose, filename, bytes: filePart.data };
}

/**
 * The fields of a multipart/form-data body: a 415 for another content type (`expected` says which
 * fields to send), a 400 (`invalid_multipart`) for a malformed body.
 */
export function readFormParts(request: Pick<GatewayRequest, 'headers' | 'body'>, expected: string): MultipartPart[] {
  try {
    const boundary = multipartBoundary(request.headers['content-type']);
    if (boundary === undefined) {
      const sent = request.headers['content-type'];
      throw new GatewayError(415, `Content-Type must be multipart/form-data with ${expected}; got ${sent ? `"${sent.slice(0, 100)}"` : 'none'}.`, {
        code: 'unsupported_media_type',
      });
    }
    return parseMultipart(request.body, boundary);
  } catch (error) {
    if (error instanceof MultipartError) throw badRequest(`The multipart/form-data body is malformed: ${error.message}`, null, 'invalid_multipart');
    throw error;
  }
}
