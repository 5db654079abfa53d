/**
 * Joins an upload's parts, in the order the client named them, into the file's S3 object. Parts are
 * at most one request body (4 MB) and usually smaller, while S3 wants every piece of a multipart
 * upload but the last to be at least 5 MiB; so parts are read in turn and gathered until a piece
 * reaches 5 MiB, and that piece is sent. Memory stays bounded whatever the file's size: the piece
 * being gathered, the pieces in flight and the one part read ahead.
 */
import { createHash } from 'node:crypto';
import { minS3PartBytes, readUploadPart, sendFilePiece } from '../store/upload-objects';

/** Pieces sent at once: the next is gathered while the previous ones travel, which halves the time of a file that is mostly waiting on S3. */
const piecesInFlight = 2;

export interface AssemblyTarget {
  workspaceId: string;
  uploadId: string;
  fileId: string;
  s3UploadId: string;
}

/** Sends the parts as pieces of the multipart upload; answers the pieces' ETags in order and the MD5 of the whole. */
export async function assembleParts(target: AssemblyTarget, partIds: readonly string[]): Promise<{ etags: string[]; md5: string }> {
  const md5 = createHash('md5');
  const etags: string[] = [];
  const inFlight: Promise<void>[] = [];
  let gathered: Buffer[] = [];
  let gatheredBytes = 0;

  const send = async (pieces: Buffer[]) => {
    const index = etags.push('') - 1;
    const body = Buffer.concat(pieces);
    const sent = sendFilePiece(target.workspaceId, target.fileId, target.s3UploadId, index + 1, body).then((etag) => {
      etags[index] = etag;
    });
    // Awaited below; until then a failure must not count as unhandled (a failed read may throw first).
    sent.catch(() => undefined);
    inFlight.push(sent);
    if (inFlight.length >= piecesInFlight) await inFlight.shift();
  };

  const read = (partId: string) => readUploadPart(target.workspaceId, target.uploadId, partId);
  let next = partIds.length > 0 ? read(partIds[0]!) : undefined;
  for (let index = 0; index < partIds.length; index++) {
    const part = await next!;
    // Read ahead: the next part arrives while this one is hashed and gathered.
    next = index + 1 < partIds.length ? read(partIds[index + 1]!) : undefined;
    md5.update(part);
    gathered.push(part);
    gatheredBytes += part.length;
    if (gatheredBytes >= minS3PartBytes) {
      await send(gathered);
      gathered = [];
      gatheredBytes = 0;
    }
  }
  // The last piece may be of any size.
  if (gatheredBytes > 0 || etags.length === 0) await send(gathered);
  await Promise.all(inFlight);
  return { etags, md5: md5.digest('hex') };
}
