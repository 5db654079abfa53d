/**
 * The bytes of the Files API's files: S3 objects under `files/`, keyed by workspace and file id
 * (keys.ts). Through the SDK's S3 client: the files function is not on the inference hot path whose
 * bundles s3-object.ts keeps small, and a read here must stream (an answer can be far above what a
 * function may hold in memory or answer buffered).
 */
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from './clients';
import { fileKey } from './keys';
import { dataBucket } from './tables';

export async function putFileObject(workspaceId: string, id: string, body: Buffer): Promise<void> {
  await s3Client().send(new PutObjectCommand({ Bucket: bucket(), Key: fileKey.object(workspaceId, id), Body: body, ContentType: 'application/octet-stream' }));
}

/** The file's bytes as they arrive from S3, or undefined when the object is gone. */
export async function streamFileObject(workspaceId: string, id: string): Promise<Readable | undefined> {
  try {
    const result = await s3Client().send(new GetObjectCommand({ Bucket: bucket(), Key: fileKey.object(workspaceId, id) }));
    return result.Body as Readable;
  } catch (error) {
    if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
    throw error;
  }
}

/** Deletes the file's bytes; deleting an object that is already gone succeeds, so a retry converges. */
export async function deleteFileObject(workspaceId: string, id: string): Promise<void> {
  await s3Client().send(new DeleteObjectCommand({ Bucket: bucket(), Key: fileKey.object(workspaceId, id) }));
}

/** The data bucket, whose `files/` prefix holds the files' and the uploads' bytes. */
export const bucket = dataBucket;
