/**
 * OpenAI's Uploads API over the gateway's files: an upload collects parts (each one request body),
 * and completing it joins the named parts into a gateway file (assemble-upload.ts).
 */
import { badRequest, GatewayError, notFound } from '../core/errors';
import { newId } from '../core/ids';
import type { GatewayRequest } from '../http/types';
import { getFileItem, putFileItem, type FileItem } from '../store/files';
import { abortFileMultipart, deleteUploadParts, finishFileMultipart, putUploadPart, startFileMultipart } from '../store/upload-objects';
import { addUploadPart, getUploadItem, moveUploadState, putUploadItem, type UploadItem } from '../store/uploads';
import { assembleParts } from './assemble-upload';
import { gatewayFileIdPrefix, gatewayUploadIdPrefix, gatewayUploadPartIdPrefix, isGatewayUploadId } from './provider-selection';
import { presentFile, type FileObject } from './stored-files';
import { maxFilenameLength, readFormParts, uploadPurposes } from './upload-form';

/** OpenAI's: an upload takes parts for an hour. */
export const uploadLifetimeSeconds = 60 * 60;
/**
 * Below OpenAI's 8 GB: completing joins the parts inside one invocation of the files function, and
 * this bound keeps that well inside its timeout (decisions.md, Files).
 */
export const maxUploadBytes = 1024 * 1024 * 1024;
/** Keeps an upload's record (its parts are a map inside it) far below DynamoDB's 400 KB item. */
export const maxUploadParts = 2000;

export interface UploadObject {
  id: string;
  object: 'upload';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'pending' | 'completed' | 'cancelled' | 'expired';
  expires_at: number;
  file: FileObject | null;
}

export interface UploadPartObject {
  id: string;
  object: 'upload.part';
  created_at: number;
  upload_id: string;
}

const now = () => Math.floor(Date.now() / 1000);

/** What `newId` makes: only such an id is looked up (DynamoDB refuses long keys). */
const storedUploadId = new RegExp(`^${gatewayUploadIdPrefix}_[0-9a-z]{26}$`);

/** The workspace's upload, or a 404: another workspace's upload is as unknown as one never made. */
export async function findUpload(workspaceId: string, id: string): Promise<UploadItem> {
  const item = storedUploadId.test(id) ? await getUploadItem(workspaceId, id) : undefined;
  if (!item) {
    const hint = isGatewayUploadId(id) ? '' : ` The gateway's upload ids start with ${gatewayUploadIdPrefix}_.`;
    throw notFound(`No upload ${JSON.stringify(id.slice(0, 100))} in this workspace.${hint}`, 'upload_not_found');
  }
  return item;
}

export function presentUpload(item: UploadItem, file?: FileItem): UploadObject {
  return {
    id: item.id,
    object: 'upload',
    bytes: item.bytes,
    created_at: item.created_at,
    filename: item.filename,
    purpose: item.purpose,
    status: statusOf(item),
    expires_at: item.expires_at,
    file: file ? presentFile(file) : null,
  };
}

/** OpenAI's status: a complete under way still shows `pending`; a pending upload past its hour is `expired`. */
function statusOf(item: UploadItem): UploadObject['status'] {
  if (item.state === 'completed' || item.state === 'cancelled') return item.state;
  return item.expires_at <= now() ? 'expired' : 'pending';
}

/** The 4xx for an upload that can no longer take parts, be completed or cancelled, naming why. */
function notPending(item: UploadItem, action: string): GatewayError {
  const status = statusOf(item);
  if (status === 'expired') {
    return badRequest(
      `Upload ${item.id} expired at ${new Date(item.expires_at * 1000).toISOString()} and cannot ${action}; create a new upload.`,
      null,
      'upload_expired',
    );
  }
  const state = item.state === 'completing' ? 'being completed' : item.state;
  return new GatewayError(409, `Upload ${item.id} is ${state} and cannot ${action}.`, { code: 'upload_not_pending' });
}

export async function createUpload(workspaceId: string, body: Record<string, unknown>): Promise<UploadItem> {
  const { filename, purpose, bytes, mime_type: mimeType } = body;
  if (typeof filename !== 'string' || filename.trim() === '')
    throw badRequest('filename is required: the name of the file to create.', 'filename', 'missing_required_parameter');
  if (filename.length > maxFilenameLength) throw badRequest(`filename is ${filename.length} characters long; the limit is ${maxFilenameLength}.`, 'filename');
  if (typeof purpose !== 'string' || !(uploadPurposes as readonly string[]).includes(purpose)) {
    throw badRequest(`purpose must be one of ${uploadPurposes.join(', ')}; got ${JSON.stringify(purpose)?.slice(0, 100)}.`, 'purpose', 'invalid_purpose');
  }
  if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 1 || bytes > maxUploadBytes) {
    throw badRequest(`bytes must be the file's size, an integer from 1 to ${maxUploadBytes}; got ${JSON.stringify(bytes)?.slice(0, 100)}.`, 'bytes');
  }
  if (typeof mimeType !== 'string' || mimeType.trim() === '' || mimeType.length > 255) {
    throw badRequest(
      'mime_type is required: the file\'s MIME type, such as "application/jsonl", at most 255 characters.',
      'mime_type',
      'missing_required_parameter',
    );
  }
  const createdAt = now();
  const item: UploadItem = {
    id: newId(gatewayUploadIdPrefix),
    workspace_id: workspaceId,
    filename: filename.trim(),
    purpose,
    mime_type: mimeType,
    bytes,
    created_at: createdAt,
    expires_at: createdAt + uploadLifetimeSeconds,
    state: 'pending',
    file_id: newId(gatewayFileIdPrefix),
    s3_upload_id: '',
    parts: {},
  };
  item.s3_upload_id = await startFileMultipart(workspaceId, item.file_id);
  if (!(await putUploadItem(item))) throw new Error(`Upload id ${item.id} was taken; ids are random, so this should not happen.`);
  return item;
}

/** Stores the `data` field of a multipart body as the upload's next part: its bytes first, then the record naming them. */
export async function addPart(workspaceId: string, uploadId: string, request: Pick<GatewayRequest, 'headers' | 'body'>): Promise<UploadPartObject> {
  const upload = await findUpload(workspaceId, uploadId);
  if (statusOf(upload) !== 'pending' || upload.state !== 'pending') throw notPending(upload, 'take parts');
  const data = readFormParts(request, 'a data field').find((part) => part.name === 'data')?.data;
  if (data === undefined)
    throw badRequest('data is required: the part\'s bytes, as a multipart/form-data field named "data".', 'data', 'missing_required_parameter');
  if (data.length === 0) throw badRequest('data is empty; a part holds at least one byte.', 'data', 'invalid_part');

  const part = { id: newId(gatewayUploadPartIdPrefix), created_at: now() };
  await putUploadPart(workspaceId, uploadId, part.id, data);
  if (!(await addUploadPart(workspaceId, uploadId, part.id, { bytes: data.length, created_at: part.created_at }, now(), maxUploadParts))) {
    await deleteUploadParts(workspaceId, uploadId, [part.id]);
    const current = await findUpload(workspaceId, uploadId);
    if (current.state === 'pending' && statusOf(current) === 'pending') {
      throw badRequest(`Upload ${uploadId} has ${maxUploadParts} parts, the most an upload takes; send larger parts.`, 'data', 'too_many_parts');
    }
    throw notPending(current, 'take parts');
  }
  return { id: part.id, object: 'upload.part', created_at: part.created_at, upload_id: uploadId };
}

/** The named parts, checked: each known and named once, adding up to the upload's announced size. */
function checkedParts(upload: UploadItem, partIds: unknown): string[] {
  if (!Array.isArray(partIds) || partIds.length === 0 || !partIds.every((id) => typeof id === 'string')) {
    throw badRequest("part_ids is required: the ids of the upload's parts, in the order of the file.", 'part_ids', 'missing_required_parameter');
  }
  const seen = new Set<string>();
  let total = 0;
  for (const [index, id] of (partIds as string[]).entries()) {
    const part = Object.hasOwn(upload.parts, id) ? upload.parts[id] : undefined;
    if (!part)
      throw badRequest(`part_ids[${index}] ${JSON.stringify(id.slice(0, 100))} is not a part of upload ${upload.id}.`, `part_ids[${index}]`, 'part_not_found');
    if (seen.has(id)) throw badRequest(`part_ids[${index}] names part ${id} a second time.`, `part_ids[${index}]`, 'duplicate_part');
    seen.add(id);
    total += part.bytes;
  }
  if (total !== upload.bytes) {
    throw badRequest(`The parts named add up to ${total} bytes, but the upload was created with bytes: ${upload.bytes}.`, 'part_ids', 'bytes_mismatch');
  }
  return partIds as string[];
}

/**
 * Joins the named parts into the upload's file. The upload is claimed first (pending → completing),
 * so a second complete or a cancel meanwhile is refused; a failure hands it back (pending), and a
 * retry sends the pieces again over the same S3 multipart upload.
 */
export async function completeUpload(workspaceId: string, uploadId: string, body: Record<string, unknown>): Promise<UploadObject> {
  const upload = await findUpload(workspaceId, uploadId);
  if (statusOf(upload) !== 'pending' || upload.state !== 'pending') throw notPending(upload, 'be completed');
  const partIds = checkedParts(upload, body.part_ids);
  const md5 = body.md5;
  if (md5 !== undefined && (typeof md5 !== 'string' || !/^[0-9a-fA-F]{32}$/.test(md5))) throw badRequest('md5 must be 32 hexadecimal digits.', 'md5');
  if (!(await moveUploadState(workspaceId, uploadId, 'pending', 'completing'))) throw notPending(await findUpload(workspaceId, uploadId), 'be completed');

  const file: FileItem = {
    id: upload.file_id,
    workspace_id: workspaceId,
    filename: upload.filename,
    purpose: upload.purpose,
    bytes: upload.bytes,
    created_at: now(),
  };
  try {
    const target = { workspaceId, uploadId, fileId: upload.file_id, s3UploadId: upload.s3_upload_id };
    const assembled = await assembleParts(target, partIds);
    if (md5 !== undefined && assembled.md5 !== md5.toLowerCase()) {
      throw badRequest(`md5 ${md5} does not match the parts named, whose MD5 is ${assembled.md5}.`, 'md5', 'md5_mismatch');
    }
    await finishFileMultipart(workspaceId, upload.file_id, upload.s3_upload_id, assembled.etags);
    // A retry after a failure past this point finds the record there already, which is the file wanted.
    if (!(await putFileItem(file)) && !(await getFileItem(workspaceId, file.id))) throw new Error(`File ${file.id} could not be recorded.`);
  } catch (error) {
    await moveUploadState(workspaceId, uploadId, 'completing', 'pending');
    throw error;
  }
  await moveUploadState(workspaceId, uploadId, 'completing', 'completed');
  // The parts are copied into the file; every part is dropped, named or not.
  await deleteUploadParts(workspaceId, uploadId, Object.keys(upload.parts));
  return presentUpload({ ...upload, state: 'completed' }, file);
}

/** Cancels a pending (or expired) upload: no parts are taken after, and the stored ones are deleted. */
export async function cancelUpload(workspaceId: string, uploadId: string): Promise<UploadObject> {
  const upload = await findUpload(workspaceId, uploadId);
  if (upload.state !== 'pending' || !(await moveUploadState(workspaceId, uploadId, 'pending', 'cancelled'))) {
    const current = await findUpload(workspaceId, uploadId);
    const state = current.state === 'completing' ? 'being completed' : current.state;
    throw new GatewayError(409, `Upload ${uploadId} is ${state} and cannot be cancelled.`, { code: 'upload_not_pending' });
  }
  await abortFileMultipart(workspaceId, upload.file_id, upload.s3_upload_id);
  // Parts added between the read above and the cancel are in the record read now.
  const current = await findUpload(workspaceId, uploadId);
  await deleteUploadParts(workspaceId, uploadId, Object.keys(current.parts));
  return presentUpload(current);
}
