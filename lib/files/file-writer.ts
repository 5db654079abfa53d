/**
 * Writes a gateway file the writer produces a line at a time (a batch's output, which may be far
 * larger than a function can hold): the bytes go to S3 in pieces of 5 MiB through a multipart
 * upload once there are that many, or in one put when the file stays small; the record that makes
 * the file visible is written last. The id is the writer's, chosen up front, so a write that runs
 * again (a finalization retried) writes the same file.
 */
import { putFileObject } from '../store/file-objects';
import { putFileItem, type FileItem } from '../store/files';
import { finishFileMultipart, minS3PartBytes, sendFilePiece, startFileMultipart } from '../store/upload-objects';
import type { FilePurpose } from './upload-form';

export class FileWriter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private bytes = 0;
  private s3UploadId: string | undefined;
  private readonly etags: string[] = [];

  constructor(
    private readonly workspaceId: string,
    private readonly file: { id: string; purpose: FilePurpose; filename: string },
  ) {}

  get written(): number {
    return this.bytes;
  }

  async write(text: string): Promise<void> {
    const piece = Buffer.from(text);
    this.pending.push(piece);
    this.pendingBytes += piece.length;
    this.bytes += piece.length;
    if (this.pendingBytes >= minS3PartBytes) await this.sendPiece();
  }

  /** Stores what is left and the file's record: the file, visible from now on. */
  async close(): Promise<FileItem> {
    const { id, purpose, filename } = this.file;
    if (this.s3UploadId === undefined) await putFileObject(this.workspaceId, id, Buffer.concat(this.pending));
    else {
      if (this.pendingBytes > 0) await this.sendPiece();
      await finishFileMultipart(this.workspaceId, id, this.s3UploadId, this.etags);
    }
    const item: FileItem = { id, workspace_id: this.workspaceId, filename, purpose, bytes: this.bytes, created_at: Math.floor(Date.now() / 1000) };
    // Written before, by a run of this writer that stopped after it: the same file.
    await putFileItem(item);
    return item;
  }

  private async sendPiece(): Promise<void> {
    this.s3UploadId ??= await startFileMultipart(this.workspaceId, this.file.id);
    const body = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    this.etags.push(await sendFilePiece(this.workspaceId, this.file.id, this.s3UploadId, this.etags.length + 1, body));
  }
}
