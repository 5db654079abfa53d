/**
 * The S3 side of the Uploads API: each part a small object of its own, and the S3 multipart upload
 * that becomes the finished file's object (`fileKey.object`). All under `files/`, the one prefix the
 * files function has rights on.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { s3Client } from './clients';
import { bucket } from './file-objects';
import { fileKey, uploadKey } from './keys';

/** S3's smallest part, for every part of a multipart upload but the last. */
export const minS3PartBytes = 5 * 1024 * 1024;
/** DeleteObjects takes at most this many keys a call. */
const maxDeleteBatch = 1000;

/** Starts the multipart upload of the file's object; answers S3's upload id. */
export async function startFileMultipart(workspaceId: string, fileId: string): Promise<string> {
  const result = await s3Client().send(
    new CreateMultipartUploadCommand({ Bucket: bucket(), Key: fileKey.object(workspaceId, fileId), ContentType: 'application/octet-stream' }),
  );
  if (!result.UploadId) throw new Error('S3 answered CreateMultipartUpload without an UploadId.');
  return result.UploadId;
}

export async function putUploadPart(workspaceId: string, uploadId: string, partId: string, body: Buffer): Promise<void> {
  await s3Client().send(
    new PutObjectCommand({ Bucket: bucket(), Key: uploadKey.part(workspaceId, uploadId, partId), Body: body, ContentType: 'application/octet-stream' }),
  );
}

/** A part's bytes, whole: a part is at most one request body (4 MB). */
export async function readUploadPart(workspaceId: string, uploadId: string, partId: string): Promise<Buffer> {
  const result = await s3Client().send(new GetObjectCommand({ Bucket: bucket(), Key: uploadKey.part(workspaceId, uploadId, partId) }));
  if (!result.Body) throw new Error(`S3 answered the part ${partId} of ${uploadId} without a body.`);
  return Buffer.from(await result.Body.transformToByteArray());
}

/** Sends one piece of the file's object; answers the ETag CompleteMultipartUpload needs. */
export async function sendFilePiece(workspaceId: string, fileId: string, s3UploadId: string, partNumber: number, body: Buffer): Promise<string> {
  const result = await s3Client().send(
    new UploadPartCommand({ Bucket: bucket(), Key: fileKey.object(workspaceId, fileId), UploadId: s3UploadId, PartNumber: partNumber, Body: body }),
  );
  if (!result.ETag) throw new Error(`S3 answered UploadPart ${partNumber} without an ETag.`);
  return result.ETag;
}

export async function finishFileMultipart(workspaceId: string, fileId: string, s3UploadId: string, etags: string[]): Promise<void> {
  await s3Client().send(
    new CompleteMultipartUploadCommand({
      Bucket: bucket(),
      Key: fileKey.object(workspaceId, fileId),
      UploadId: s3UploadId,
      MultipartUpload: { Parts: etags.map((ETag, index) => ({ ETag, PartNumber: index + 1 })) },
    }),
  );
}

/** Drops the multipart upload and the pieces sent to it; one already gone is fine, so a retry converges. */
export async function abortFileMultipart(workspaceId: string, fileId: string, s3UploadId: string): Promise<void> {
  try {
    await s3Client().send(new AbortMultipartUploadCommand({ Bucket: bucket(), Key: fileKey.object(workspaceId, fileId), UploadId: s3UploadId }));
  } catch (error) {
    if ((error as { name?: string }).name !== 'NoSuchUpload') throw error;
  }
}

/** Deletes the parts' objects, a thousand a call. */
export async function deleteUploadParts(workspaceId: string, uploadId: string, partIds: string[]): Promise<void> {
  for (let start = 0; start < partIds.length; start += maxDeleteBatch) {
    const keys = partIds.slice(start, start + maxDeleteBatch).map((partId) => ({ Key: uploadKey.part(workspaceId, uploadId, partId) }));
    await s3Client().send(new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: keys, Quiet: true } }));
  }
}
