/**
 * The gateway's Uploads API through the official openai client, unchanged: create, parts, complete
 * and cancel, the file read back through the Files API; a client that names a provider still reaches
 * the provider's own uploads. (openai 6 has no chunked-upload helper; the calls are the client's own.)
 */
import { randomBytes } from 'node:crypto';
import { BadRequestError, ConflictError, toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openaiClient } from '../support/gateway-client';

describe('the gateway’s uploads through the official openai client', () => {
  const client = openaiClient({ provider: null });

  it('creates an upload, adds parts, completes it and reads the file back', { timeout: 60_000 }, async () => {
    const content = randomBytes(9 * 1024 * 1024 + 123);
    const upload = await client.uploads.create({ filename: 'big.jsonl', purpose: 'batch', bytes: content.length, mime_type: 'application/jsonl' });
    expect(upload).toMatchObject({ object: 'upload', status: 'pending', bytes: content.length, filename: 'big.jsonl', purpose: 'batch' });
    expect(upload.id).toMatch(/^gwu_/);

    const partIds: string[] = [];
    const partSize = 3 * 1024 * 1024;
    for (let start = 0; start < content.length; start += partSize) {
      const part = await client.uploads.parts.create(upload.id, { data: await toFile(content.subarray(start, start + partSize), 'part') });
      expect(part).toMatchObject({ object: 'upload.part', upload_id: upload.id });
      partIds.push(part.id);
    }

    const completed = await client.uploads.complete(upload.id, { part_ids: partIds });
    expect(completed.status).toBe('completed');
    expect(completed.file).toMatchObject({ object: 'file', bytes: content.length, filename: 'big.jsonl', purpose: 'batch' });
    const read = await client.files.content(completed.file!.id);
    expect(Buffer.from(await read.arrayBuffer()).equals(content)).toBe(true);
    await client.files.delete(completed.file!.id);
  });

  it('cancels an upload and reports refusals as the client’s errors', async () => {
    const upload = await client.uploads.create({ filename: 'c.jsonl', purpose: 'batch', bytes: 4, mime_type: 'application/jsonl' });
    const part = await client.uploads.parts.create(upload.id, { data: await toFile(Buffer.from('abc'), 'part') });
    const mismatch = await client.uploads.complete(upload.id, { part_ids: [part.id] }).catch((caught) => caught);
    expect(mismatch).toBeInstanceOf(BadRequestError);
    expect(mismatch.code).toBe('bytes_mismatch');

    expect(await client.uploads.cancel(upload.id)).toMatchObject({ id: upload.id, status: 'cancelled' });
    const again = await client.uploads.cancel(upload.id).catch((caught) => caught);
    expect(again).toBeInstanceOf(ConflictError);
  });
});

describe('a provider’s uploads through the official openai client', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  it('creates the upload at the provider when the client names one', async () => {
    const answer = {
      id: 'upload_abc',
      object: 'upload',
      bytes: 3,
      created_at: 1719184911,
      filename: 'p.jsonl',
      purpose: 'batch',
      status: 'pending',
      expires_at: 1719188511,
    };
    upstream.script('/e2e-uploads/v1/uploads', [{ status: 200, json: answer }]);
    const provider = openaiClient({ headers: { 'x-gateway-custom-host': `${upstream.url}/e2e-uploads/v1` } });
    const created = await provider.uploads.create({ filename: 'p.jsonl', purpose: 'batch', bytes: 3, mime_type: 'application/jsonl' });
    expect(created).toEqual(answer);
    const sent = upstream.requests.find((request) => request.path === '/e2e-uploads/v1/uploads')!;
    expect(JSON.parse(sent.body.toString())).toEqual({ filename: 'p.jsonl', purpose: 'batch', bytes: 3, mime_type: 'application/jsonl' });
  });
});
