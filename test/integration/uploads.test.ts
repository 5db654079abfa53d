/**
 * The gateway's Uploads API over HTTP: a file larger than one request uploaded in parts and read
 * back byte for byte, parts joined in the order named, the byte count checked, cancel, completing or
 * cancelling twice, unknown parts, workspaces apart, and an expired upload refusing parts.
 */
import { randomBytes } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { dynamoClient, resetClients, s3Client } from '../../lib/store/clients';
import { fileKey, uploadKey } from '../../lib/store/keys';
import { env, gatewayFetch } from '../support/gateway-client';
import { connectToGatewayStore, controlTable } from '../support/gateway-store';

/** serverless.yml's DataBucket as the local runtime names it. */
const bucket = 'llm-gateway-local-000000000000-data';
const store = connectToGatewayStore();

beforeAll(() => {
  Object.assign(process.env, { GATEWAY_S3_ENDPOINT: env().endpoints.s3, GATEWAY_BUCKET: bucket });
  resetClients();
});

async function call(method: string, path: string, options: { json?: unknown; form?: FormData; key?: string } = {}) {
  const headers: Record<string, string> = options.key ? { 'x-gateway-api-key': options.key } : {};
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  const body = options.form ?? (options.json === undefined ? undefined : JSON.stringify(options.json));
  const response = await gatewayFetch(path, { method, body, headers });
  const bytes = Buffer.from(await response.arrayBuffer());
  const json = response.headers.get('content-type')?.includes('json') ? JSON.parse(bytes.toString('utf8')) : undefined;
  return { status: response.status, bytes, body: json };
}

const create = (bytes: number, key?: string, filename = 'large.jsonl') =>
  call('POST', '/uploads', { json: { filename, purpose: 'batch', bytes, mime_type: 'application/jsonl' }, key });

function addPart(uploadId: string, data: Buffer, key?: string) {
  const form = new FormData();
  form.append('data', new Blob([data]), 'blob');
  return call('POST', `/uploads/${uploadId}/parts`, { form, key });
}

const objectExists = (key: string) =>
  s3Client()
    .send(new HeadObjectCommand({ Bucket: bucket, Key: key }))
    .then(
      () => true,
      (error) => (error.name === 'NotFound' || error.$metadata?.httpStatusCode === 404 ? false : Promise.reject(error)),
    );

describe('uploads: the gateway’s own', () => {
  it('uploads a 20 MB file in parts of at most 4 MB and gives it back byte for byte', { timeout: 120_000 }, async () => {
    const content = randomBytes(20 * 1024 * 1024);
    const created = await create(content.length);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^gwu_[0-9a-z]{26}$/),
      object: 'upload',
      bytes: content.length,
      created_at: expect.any(Number),
      filename: 'large.jsonl',
      purpose: 'batch',
      status: 'pending',
      expires_at: created.body.created_at + 3600,
      file: null,
    });
    const uploadId = created.body.id;

    // Below the 4 MB request limit once the multipart framing is added.
    const partSize = 4 * 1024 * 1024 - 4096;
    const partIds: string[] = [];
    for (let start = 0; start < content.length; start += partSize) {
      const part = await addPart(uploadId, content.subarray(start, start + partSize));
      expect(part.status, JSON.stringify(part.body)).toBe(200);
      expect(part.body).toEqual({
        id: expect.stringMatching(/^gwp_[0-9a-z]{26}$/),
        object: 'upload.part',
        created_at: expect.any(Number),
        upload_id: uploadId,
      });
      partIds.push(part.body.id);
    }
    expect(partIds.length).toBe(6);

    const started = performance.now();
    const completed = await call('POST', `/uploads/${uploadId}/complete`, { json: { part_ids: partIds } });
    const completeMs = performance.now() - started;
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect(completed.body).toMatchObject({ id: uploadId, object: 'upload', status: 'completed', bytes: content.length });
    expect(completed.body.file).toEqual({
      id: expect.stringMatching(/^gwf_[0-9a-z]{26}$/),
      object: 'file',
      bytes: content.length,
      created_at: expect.any(Number),
      filename: 'large.jsonl',
      purpose: 'batch',
      status: 'processed',
      expires_at: null,
      status_details: null,
    });
    // Far inside the files function's timeout; locally it takes about a second.
    expect(completeMs).toBeLessThan(30_000);

    const fileId = completed.body.file.id;
    const read = await call('GET', `/files/${fileId}/content`);
    expect(read.status).toBe(200);
    expect(read.bytes.length).toBe(content.length);
    expect(read.bytes.equals(content)).toBe(true);
    expect((await call('GET', `/files/${fileId}`)).body).toEqual(completed.body.file);

    // The parts are gone once joined.
    for (const partId of partIds) expect(await objectExists(uploadKey.part(store.workspaceId, uploadId, partId))).toBe(false);
  });

  it('joins the parts in the order of part_ids, not the order they were added', async () => {
    const pieces = ['first,', 'second,', 'third'].map((text) => Buffer.from(text));
    const created = await create(Buffer.concat(pieces).length);
    const ids: string[] = [];
    for (const piece of [pieces[2]!, pieces[0]!, pieces[1]!]) ids.push((await addPart(created.body.id, piece)).body.id);
    const completed = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [ids[1], ids[2], ids[0]] } });
    expect(completed.status, JSON.stringify(completed.body)).toBe(200);
    expect((await call('GET', `/files/${completed.body.file.id}/content`)).bytes.toString()).toBe('first,second,third');
  });

  it('checks md5 when given', async () => {
    const data = Buffer.from('checked\n');
    const created = await create(data.length);
    const part = (await addPart(created.body.id, data)).body.id;
    const wrong = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part], md5: '0'.repeat(32) } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({ param: 'md5', code: 'md5_mismatch' });
    // A failed complete leaves the upload pending: the right md5 completes it.
    const md5 = (await import('node:crypto')).createHash('md5').update(data).digest('hex');
    const right = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part], md5 } });
    expect(right.status, JSON.stringify(right.body)).toBe(200);
    expect((await call('GET', `/files/${right.body.file.id}/content`)).bytes.equals(data)).toBe(true);
  });

  it('refuses a byte count other than the upload’s, naming both numbers', async () => {
    const created = await create(10);
    const part = (await addPart(created.body.id, Buffer.from('123456789'))).body.id;
    const response = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part] } });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('bytes_mismatch');
    expect(response.body.error.message).toContain('9 bytes');
    expect(response.body.error.message).toContain('bytes: 10');
    // Still pending: a part more makes it right.
    const more = (await addPart(created.body.id, Buffer.from('0'))).body.id;
    expect((await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part, more] } })).status).toBe(200);
  });

  it('refuses unknown and repeated part ids, naming which', async () => {
    const created = await create(4);
    const part = (await addPart(created.body.id, Buffer.from('ab'))).body.id;
    const other = await create(2);
    const foreign = (await addPart(other.body.id, Buffer.from('cd'))).body.id;
    const unknown = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part, foreign] } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ param: 'part_ids[1]', code: 'part_not_found' });
    const repeated = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part, part] } });
    expect(repeated.body.error).toMatchObject({ param: 'part_ids[1]', code: 'duplicate_part' });
    expect((await call('POST', `/uploads/${created.body.id}/complete`, { json: {} })).body.error.param).toBe('part_ids');
  });

  it('refuses a second complete, a cancel after it, and parts for a completed upload', async () => {
    const created = await create(3);
    const part = (await addPart(created.body.id, Buffer.from('abc'))).body.id;
    expect((await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part] } })).status).toBe(200);
    for (const response of [
      await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part] } }),
      await call('POST', `/uploads/${created.body.id}/cancel`),
      await addPart(created.body.id, Buffer.from('d')),
    ]) {
      expect(response.status).toBe(409);
      expect(response.body.error).toMatchObject({ code: 'upload_not_pending', message: expect.stringContaining('is completed') });
    }
  });

  it('cancels: the parts are deleted, and it takes no parts, complete or second cancel after', async () => {
    const created = await create(6);
    const part = (await addPart(created.body.id, Buffer.from('abcdef'))).body.id;
    const partKey = uploadKey.part(store.workspaceId, created.body.id, part);
    expect(await objectExists(partKey)).toBe(true);
    const cancelled = await call('POST', `/uploads/${created.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id: created.body.id, object: 'upload', status: 'cancelled', file: null });
    expect(await objectExists(partKey)).toBe(false);
    for (const response of [
      await call('POST', `/uploads/${created.body.id}/cancel`),
      await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part] } }),
      await addPart(created.body.id, Buffer.from('g')),
    ]) {
      expect(response.status).toBe(409);
      expect(response.body.error.message).toContain('is cancelled');
    }
  });

  it('keeps workspaces apart: another workspace’s upload is not found', async () => {
    const created = await create(2);
    const part = (await addPart(created.body.id, Buffer.from('xy'))).body.id;
    const key = store.otherWorkspaceKey;
    expect((await addPart(created.body.id, Buffer.from('z'), key)).status).toBe(404);
    expect((await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part] }, key })).status).toBe(404);
    const cancel = await call('POST', `/uploads/${created.body.id}/cancel`, { key });
    expect(cancel.status).toBe(404);
    expect(cancel.body.error.code).toBe('upload_not_found');
    // Untouched by the other workspace's attempts.
    const completed = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part] } });
    expect(completed.status).toBe(200);
    expect((await call('GET', `/files/${completed.body.file.id}`, { key })).status).toBe(404);
  });

  it('refuses parts and complete once the upload has expired', async () => {
    const created = await create(2);
    const part = (await addPart(created.body.id, Buffer.from('ab'))).body.id;
    // Expired by writing the stored expiry, not by waiting an hour.
    const past = Math.floor(Date.now() / 1000) - 1;
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: controlTable,
        Key: marshall(uploadKey.item(store.workspaceId, created.body.id)),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: marshall({ ':past': past }),
      }),
    );
    const refused = await addPart(created.body.id, Buffer.from('c'));
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('upload_expired');
    const complete = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part] } });
    expect(complete.body.error.code).toBe('upload_expired');
    // An expired upload can still be cancelled, which deletes its parts.
    const cancelled = await call('POST', `/uploads/${created.body.id}/cancel`);
    expect(cancelled.body.status).toBe('cancelled');
    expect(await objectExists(uploadKey.part(store.workspaceId, created.body.id, part))).toBe(false);
  });

  it('refuses bad creation fields, naming each', async () => {
    const base = { filename: 'a.jsonl', purpose: 'batch', bytes: 10, mime_type: 'application/jsonl' };
    for (const [field, body] of [
      ['filename', { ...base, filename: '' }],
      ['purpose', { ...base, purpose: 'batch_output' }],
      ['bytes', { ...base, bytes: 0 }],
      ['bytes', { ...base, bytes: 1.5 }],
      ['bytes', { ...base, bytes: 2 * 1024 ** 3 }],
      ['mime_type', { ...base, mime_type: undefined }],
    ] as const) {
      const response = await call('POST', '/uploads', { json: body });
      expect(response.status, field).toBe(400);
      expect(response.body.error.param, JSON.stringify(body)).toBe(field);
    }
    const created = await create(1);
    const form = new FormData();
    form.append('file', new Blob(['x']), 'x');
    const noData = await call('POST', `/uploads/${created.body.id}/parts`, { form });
    expect(noData.body.error).toMatchObject({ param: 'data', code: 'missing_required_parameter' });
  });

  it('refuses a part above the request limit with a 413 naming data', async () => {
    const created = await create(5 * 1024 * 1024);
    const tooLarge = await addPart(created.body.id, Buffer.alloc(5 * 1024 * 1024));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error).toMatchObject({ param: 'data', code: 'request_too_large' });
    expect(tooLarge.body.error.message).toContain('a part may make a body of at most');
  });

  it('answers 404 for upload ids it never made', async () => {
    for (const id of ['gwu_', `gwu_${'a'.repeat(3000)}`, 'gwu_01JD3ABCDEFGHJKMNPQRSTVWXY', 'anything']) {
      const response = await call('POST', `/uploads/${id}/cancel`);
      expect(response.status, id).toBe(404);
    }
  });

  it('writes the file under the workspace’s files prefix, as a Files API upload would', async () => {
    const created = await create(1);
    const part = (await addPart(created.body.id, Buffer.from('1'))).body.id;
    const completed = await call('POST', `/uploads/${created.body.id}/complete`, { json: { part_ids: [part] } });
    expect(await objectExists(fileKey.object(store.workspaceId, completed.body.file.id))).toBe(true);
  });
});
