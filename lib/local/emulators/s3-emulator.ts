/**
 * The local S3 emulator: s3rver, objects as files under the given directory (they survive a restart).
 * s3rver is old, so it is wrapped here to work with the current SDK and to stay inside its directory:
 * - `aws-chunked` request bodies (what the current SDK sends for stream bodies, with a trailing
 *   CRC32 checksum) are decoded before s3rver stores them, so clients keep the SDK's default
 *   checksum settings, as on AWS. Checksums are not verified and not returned.
 * - objects are written to a temporary file and renamed once complete, before the response is sent
 *   (s3rver itself answers before the file is flushed, and a crash left half objects).
 * - any access key is accepted (s3rver only knows its own `S3RVER` key); signatures are not checked,
 *   as in dynalite and fauxqs.
 * - keys, bucket names, copy sources and upload ids with `.`/`..` path segments are refused (s3rver
 *   maps keys to file paths and would write outside its directory).
 * - AbortMultipartUpload (`DELETE …?uploadId=`), which s3rver lacks, drops the upload's parts (the
 *   Uploads API's cancel sends it).
 *
 * Nothing prints to stdout (the gateway's stdout carries request logs). Started by emulators.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { closeServer, listen } from './listen';

export interface RunningS3Emulator {
  endpoint: string;
  /** Stops the server and s3rver's logger. */
  stop(): Promise<void>;
}

const requireHere = createRequire(import.meta.url);

interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | string[] | undefined>;
  req: IncomingMessage | Readable;
  get(header: string): string;
  status: number;
  body: unknown;
}
type KoaMiddleware = (ctx: KoaContext, next: () => Promise<void>) => Promise<void>;
interface S3rverApp {
  store: unknown;
  context: { store: unknown };
  middleware: KoaMiddleware[];
  logger: { close(): void };
  callback(): (req: IncomingMessage, res: import('node:http').ServerResponse) => void;
}
interface S3rverObject {
  bucket: string;
  key: string;
  content: Readable | Buffer;
  metadata: Record<string, unknown>;
}
interface FilesystemStoreClass {
  new (directory: string): FilesystemStoreInstance;
}
interface FilesystemStoreInstance {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5: string): Promise<void>;
}
type S3ErrorClass = new (code: string, message: string, detail?: Record<string, string>) => Error;
interface AwsAccountModule {
  registry: Map<string, unknown>;
  DUMMY_ACCOUNT: { createKeyPair(accessKeyId: string, secretAccessKey: string): void };
}

/** Starts s3rver on host:port (0: a free port), storing objects under `dir`. */
export async function startS3Emulator(dir: string, host: string, port: number): Promise<RunningS3Emulator> {
  await mkdir(dir, { recursive: true });
  const fromS3rver = createRequire(requireHere.resolve('s3rver'));
  const S3rver = fromS3rver('./s3rver.js') as new (options: Record<string, unknown>) => S3rverApp;
  const FilesystemStore = fromS3rver('./stores/filesystem.js') as FilesystemStoreClass;
  const S3Error = fromS3rver('./models/error.js') as S3ErrorClass;
  const accounts = fromS3rver('./models/account.js') as AwsAccountModule;

  const app = new S3rver({
    directory: dir,
    silent: true,
    vhostBuckets: false,
    allowMismatchedSignatures: true,
    resetOnClose: false,
    configureBuckets: [],
  });
  const store = new (durableStore(FilesystemStore))(dir);
  app.store = app.context.store = store;
  app.middleware.unshift(localS3Middleware(S3Error, accounts), abortMultipartMiddleware(store, S3Error));

  const server = createServer(app.callback());
  const endpoint = await listen(server, port, host);
  return {
    endpoint,
    stop: async () => {
      await closeServer(server);
      app.logger.close();
    },
  };
}

/** Runs before s3rver's own middleware. */
function localS3Middleware(S3Error: S3ErrorClass, accounts: AwsAccountModule): KoaMiddleware {
  return async (ctx, next) => {
    const refusal = unsafePathReason(ctx);
    if (refusal) throw new S3Error('InvalidArgument', refusal);

    const accessKeyId = accessKeyOf(ctx);
    if (accessKeyId && !accounts.registry.has(accessKeyId)) {
      accounts.DUMMY_ACCOUNT.createKeyPair(accessKeyId, accessKeyId);
    }

    const req = ctx.req as IncomingMessage;
    const encodings = (req.headers['content-encoding'] ?? '')
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const sha = String(req.headers['x-amz-content-sha256'] ?? '');
    if (encodings.some((e) => e.toLowerCase() === 'aws-chunked') || sha.startsWith('STREAMING-')) {
      const rest = encodings.filter((e) => e.toLowerCase() !== 'aws-chunked');
      if (rest.length) req.headers['content-encoding'] = rest.join(', ');
      else delete req.headers['content-encoding'];
      const decodedLength = req.headers['x-amz-decoded-content-length'];
      if (decodedLength !== undefined) req.headers['content-length'] = String(decodedLength);
      else delete req.headers['content-length'];
      delete req.headers['x-amz-decoded-content-length'];
      delete req.headers['x-amz-trailer'];
      const decoder = new AwsChunkedDecoder();
      req.on('error', (err) => decoder.destroy(err));
      ctx.req = req.pipe(decoder);
    }
    await next();
  };
}

/** AbortMultipartUpload: s3rver keeps an upload's parts in a directory of its own, which goes; the object is never touched. */
function abortMultipartMiddleware(store: FilesystemStoreInstance, S3Error: S3ErrorClass): KoaMiddleware {
  return async (ctx, next) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string') return next();
    const bucket = decodeURIComponent(ctx.path.split('/')[1] ?? '');
    // The upload id was checked against `.`/`..` and separators by localS3Middleware.
    const parts = path.join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
    if (!(await stat(parts).catch(() => undefined))) {
      throw new S3Error(
        'NoSuchUpload',
        'The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.',
        {
          UploadId: uploadId,
        },
      );
    }
    await rm(parts, { recursive: true, force: true });
    ctx.status = 204;
    ctx.body = null;
  };
}

function isUnsafeSegmentPath(value: string): boolean {
  return value.split(/[\\/]/).some((segment) => segment === '.' || segment === '..');
}

function unsafePathReason(ctx: KoaContext): string | undefined {
  let decodedPath: string;
  try {
    decodedPath = decodeURIComponent(ctx.path);
  } catch {
    return 'The request path is not valid percent-encoding.';
  }
  if (isUnsafeSegmentPath(decodedPath)) {
    return 'The local S3 emulator refuses bucket names and keys with "." or ".." path segments.';
  }
  const copySource = ctx.get('x-amz-copy-source');
  if (copySource) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(copySource);
    } catch {
      return 'x-amz-copy-source is not valid percent-encoding.';
    }
    if (isUnsafeSegmentPath(decoded)) {
      return 'The local S3 emulator refuses copy sources with "." or ".." path segments.';
    }
  }
  const uploadId = ctx.query.uploadId;
  if (uploadId !== undefined && !/^[A-Za-z0-9_-]+$/.test(String(uploadId))) {
    return 'The uploadId is not one this emulator issued.';
  }
  return undefined;
}

function accessKeyOf(ctx: KoaContext): string | undefined {
  const authorization = ctx.get('authorization');
  const v4 = /Credential=([^/,\s]+)\//.exec(authorization);
  if (v4) return v4[1];
  const v2 = /^AWS ([^:\s]+):/.exec(authorization);
  if (v2) return v2[1];
  const queryCredential = ctx.query['X-Amz-Credential'];
  if (typeof queryCredential === 'string') return queryCredential.split('/')[0] || undefined;
  const queryV2 = ctx.query.AWSAccessKeyId;
  return typeof queryV2 === 'string' ? queryV2 : undefined;
}

/** s3rver's store, with object and part bodies fully on disk (temp file + rename) before replying. */
function durableStore(FilesystemStore: FilesystemStoreClass): FilesystemStoreClass {
  return class DurableFilesystemStore extends FilesystemStore {
    async putObject(object: S3rverObject): Promise<{ size: number; md5: string }> {
      const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
      await mkdir(path.dirname(objectPath), { recursive: true });
      const temp = tempPathFor(objectPath);
      try {
        const written = await writeBody(object.content, temp);
        await this.putMetadata(object.bucket, object.key, object.metadata, written.md5);
        await rename(temp, objectPath);
        return written;
      } catch (err) {
        await rm(temp, { force: true });
        throw err;
      }
    }

    async putPart(bucket: string, uploadId: string, partNumber: number | string, content: Readable | Buffer): Promise<{ size: number; md5: string }> {
      const partPath = path.join(this.getResourcePath(bucket, undefined, 'uploads'), uploadId, String(partNumber));
      await mkdir(path.dirname(partPath), { recursive: true });
      const temp = tempPathFor(partPath);
      try {
        const written = await writeBody(content, temp);
        await rename(temp, partPath);
        await writeFile(`${partPath}.md5`, written.md5);
        return written;
      } catch (err) {
        await rm(temp, { force: true });
        throw err;
      }
    }
  };
}

/** A sibling name that s3rver's listing ignores (it only lists `*._S3rver_object`). */
function tempPathFor(file: string): string {
  return `${file}.${randomBytes(6).toString('hex')}.tmp`;
}

async function writeBody(content: Readable | Buffer, file: string): Promise<{ size: number; md5: string }> {
  const hash = createHash('md5');
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  const source = Buffer.isBuffer(content) ? Readable.from([content]) : content;
  await pipeline(source, measure, createWriteStream(file));
  return { size, md5: hash.digest('hex') };
}

/**
 * Decodes an `aws-chunked` body: `<hex size>[;chunk-signature=…]\r\n<data>\r\n` … `0[;…]\r\n`,
 * then optional trailer lines (`x-amz-checksum-crc32:…`) and an empty line.
 */
class AwsChunkedDecoder extends Transform {
  #state: 'size' | 'data' | 'dataEnd' | 'trailer' | 'done' = 'size';
  #remaining = 0;
  #pending: Buffer = Buffer.alloc(0);

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const buffer = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    let offset = 0;
    while (offset < buffer.length && this.#state !== 'done') {
      if (this.#state === 'data') {
        const take = Math.min(this.#remaining, buffer.length - offset);
        this.push(buffer.subarray(offset, offset + take));
        offset += take;
        this.#remaining -= take;
        if (this.#remaining === 0) this.#state = 'dataEnd';
        continue;
      }
      const lineEnd = buffer.indexOf('\r\n', offset);
      if (lineEnd === -1) break;
      const line = buffer.toString('latin1', offset, lineEnd);
      offset = lineEnd + 2;
      if (this.#state === 'dataEnd') {
        if (line !== '') return callback(new Error('Malformed aws-chunked body: missing CRLF after a chunk.'));
        this.#state = 'size';
      } else if (this.#state === 'size') {
        const sizeField = line.split(';', 1)[0].trim();
        if (!/^[0-9a-fA-F]{1,8}$/.test(sizeField)) {
          return callback(new Error('Malformed aws-chunked body: bad chunk size.'));
        }
        this.#remaining = parseInt(sizeField, 16);
        this.#state = this.#remaining === 0 ? 'trailer' : 'data';
      } else if (line === '') {
        this.#state = 'done';
      }
    }
    this.#pending = offset < buffer.length && this.#state !== 'done' ? Buffer.from(buffer.subarray(offset)) : Buffer.alloc(0);
    if (this.#pending.length > 64 * 1024) {
      return callback(new Error('Malformed aws-chunked body: chunk header too long.'));
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    // A body ending right after the last (0-size) chunk line, without trailers, is complete too.
    if (this.#state === 'done' || (this.#state === 'trailer' && this.#pending.length === 0)) callback();
    else callback(new Error('Truncated aws-chunked body.'));
  }
}
