import type { Readable } from 'node:stream';
import { notFound } from '../core/errors';
import { newId } from '../core/ids';
import { deleteFileObject, putFileObject, streamFileObject } from '../store/file-objects';
import { deleteFileItem, getFileItem, listFileItems, putFileItem, type FileItem, type FileListQuery } from '../store/files';
import type { Page } from '../store/newest-first';
import { gatewayFileIdPrefix, isGatewayFileId } from './provider-selection';
import type { FilePurpose } from './upload-form';

export type { FileItem, FileListQuery };

/** OpenAI's file object. */
export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: 'processed';
  expires_at: null;
  status_details: null;
}

export function fileNotFound(id: string) {
  const hint = isGatewayFileId(id)
    ? ''
    : ` The gateway's file ids start with ${gatewayFileIdPrefix}_; for a provider's file, select the provider (x-gateway-provider).`;
  return notFound(`No file ${JSON.stringify(id.slice(0, 100))} in this workspace.${hint}`, 'file_not_found');
}

/**
 * Stores a file: its bytes first, then the record that makes it visible, so a file that can be
 * listed always has its content. (The gateway's own writers, a batch's output, write through
 * file-writer.ts.)
 */
export async function createFile(workspaceId: string, file: { purpose: FilePurpose; filename: string; bytes: Buffer }): Promise<FileItem> {
  const item: FileItem = {
    id: newId(gatewayFileIdPrefix),
    workspace_id: workspaceId,
    filename: file.filename,
    purpose: file.purpose,
    bytes: file.bytes.length,
    created_at: Math.floor(Date.now() / 1000),
  };
  await putFileObject(workspaceId, item.id, file.bytes);
  if (!(await putFileItem(item))) throw new Error(`File id ${item.id} was taken; ids are random, so this should not happen.`);
  return item;
}

/** What `newId` makes: only such an id is looked up, so no client's path segment reaches a key (DynamoDB refuses long ones). */
const storedIdPattern = new RegExp(`^${gatewayFileIdPrefix}_[0-9a-z]{26}$`);

/** The workspace's file, or a 404: another workspace's file is as unknown as one never made. */
export async function findFile(workspaceId: string, id: string): Promise<FileItem> {
  const item = storedIdPattern.test(id) ? await getFileItem(workspaceId, id) : undefined;
  if (!item) throw fileNotFound(id);
  return item;
}

export function listFiles(workspaceId: string, query: FileListQuery): Promise<Page<FileItem>> {
  return listFileItems(workspaceId, query);
}

/**
 * Deletes a file's bytes, then its record: a failure between the two leaves a file whose content
 * is gone (its content answers 404) rather than bytes no record reaches, and the retry finishes it.
 */
export async function deleteFile(workspaceId: string, id: string): Promise<void> {
  await findFile(workspaceId, id);
  await deleteFileObject(workspaceId, id);
  if (!(await deleteFileItem(workspaceId, id))) throw fileNotFound(id);
}

/** The file's bytes as a stream from S3. */
export async function openFileContent(workspaceId: string, id: string): Promise<{ file: FileItem; content: Readable }> {
  const file = await findFile(workspaceId, id);
  const content = await streamFileObject(workspaceId, id);
  if (!content) throw notFound(`The content of file ${id} is gone: the file is being deleted.`, 'file_not_found');
  return { file, content };
}

export function presentFile(item: FileItem): FileObject {
  return {
    id: item.id,
    object: 'file',
    bytes: item.bytes,
    created_at: item.created_at,
    filename: item.filename,
    purpose: item.purpose,
    status: 'processed',
    expires_at: null,
    status_details: null,
  };
}
