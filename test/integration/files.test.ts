/**
 * The gateway's Files API over HTTP: upload, list (purpose filter, paging, order), retrieve,
 * content byte for byte (streamed, above what a buffered Lambda answer can carry), delete with its
 * bytes, workspaces apart, member keys, and the refusals that name the field to fix.
 */
import { randomBytes } from 'node:crypto';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFile } from '../../lib/files/stored-files';
import { resetClients, s3Client } from '../../lib/store/clients';
import { fileKey } from '../../lib/store/keys';
import { env, gatewayFetch } from '../support/gateway-client';
import { connectToGatewayStore, createWorkspaceAdminKey } from '../support/gateway-store';

/** serverless.yml's DataBucket as the local runtime names it. */
const bucket = 'llm-gateway-local-000000000000-data';
const store = connectToGatewayStore();
/** A workspace of this file's own, so its listings hold only the files made here. */
const listing = { workspaceId: `ws_files_${randomBytes(4).toString('hex')}`, key: '' };

beforeAll(async () => {
  Object.assign(process.env, { GATEWAY_S3_ENDPOINT: env().endpoints.s3, GATEWAY_BUCKET: bucket });
  resetClients();
  listing.key = await createWorkspaceAdminKey(listing.workspaceId);
});

async function upload(bytes: Buffer | string, options: { purpose?: string; filename?: string; key?: string; headers?: Record<string, string> } = {}) {
  const form = new FormData();
  if (options.purpose !== '') form.append('purpose', options.purpose ?? 'batch');
  form.append('file', new Blob([bytes]), options.filename ?? 'input.jsonl');
  const response = await gatewayFetch('/files', {
    method: 'POST',
    body: form,
    headers: { ...(options.key ? { 'x-gateway-api-key': options.key } : {}), ...options.headers },
  });
  return { status: response.status, body: await response.json() };
}

async function call(method: string, path: string, key?: string, headers: Record<string, string> = {}) {
  const response = await gatewayFetch(path, { method, headers: { ...(key ? { 'x-gateway-api-key': key } : {}), ...headers } });
  const bytes = Buffer.from(await response.arrayBuffer());
  const json = response.headers.get('content-type')?.includes('json') ? JSON.parse(bytes.toString('utf8')) : undefined;
  return { status: response.status, headers: response.headers, bytes, body: json };
}

const objectExists = (workspaceId: string, id: string) =>
  s3Client()
    .send(new HeadObjectCommand({ Bucket: bucket, Key: fileKey.object(workspaceId, id) }))
    .then(
      () => true,
      (error) => (error.name === 'NotFound' || error.$metadata?.httpStatusCode === 404 ? false : Promise.reject(error)),
    );

describe('files: the gateway’s own', () => {
  it('stores an upload and answers OpenAI’s file object; retrieve and content give it back byte for byte', async () => {
    // Just below the request limit once the multipart framing is added.
    const bytes = randomBytes(4 * 1024 * 1024 - 4096);
    const created = await upload(bytes, { filename: '../../etc/passwd' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^gwf_[0-9a-z]{26}$/),
      object: 'file',
      bytes: bytes.length,
      created_at: expect.any(Number),
      filename: '../../etc/passwd',
      purpose: 'batch',
      status: 'processed',
      expires_at: null,
      status_details: null,
    });
    expect(Math.abs(created.body.created_at - Date.now() / 1000)).toBeLessThan(60);
    // The file name is data: the object's key is made of the ids.
    expect(await objectExists(store.workspaceId, created.body.id)).toBe(true);

    const retrieved = await call('GET', `/files/${created.body.id}`);
    expect(retrieved.body).toEqual(created.body);

    const content = await call('GET', `/files/${created.body.id}/content`);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('application/octet-stream');
    expect(content.bytes.equals(bytes)).toBe(true);
  });

  it('streams content larger than a buffered Lambda answer (6 MB) byte for byte', async () => {
    // A batch's output is written by the gateway itself, and may be far larger than an upload.
    const bytes = randomBytes(7 * 1024 * 1024 + 123);
    const written = await createFile(store.workspaceId, { purpose: 'batch_output', filename: 'batch_output.jsonl', bytes });
    const content = await call('GET', `/files/${written.id}/content`);
    expect(content.status).toBe(200);
    expect(content.bytes.length).toBe(bytes.length);
    expect(content.bytes.equals(bytes)).toBe(true);
    expect((await call('GET', `/files/${written.id}`)).body).toMatchObject({ purpose: 'batch_output', bytes: bytes.length });
  });

  it('lists newest first by default, filters by purpose, pages with after and orders asc', async () => {
    const made: Array<{ id: string; purpose: string }> = [];
    for (const purpose of ['batch', 'fine-tune', 'batch', 'assistants', 'batch']) {
      const created = await upload(`{"n":${made.length}}\n`, { purpose, key: listing.key });
      expect(created.status).toBe(200);
      made.push(created.body);
    }
    const ids = made.map((file) => file.id);
    const all = await call('GET', '/files', listing.key);
    expect(all.body).toMatchObject({ object: 'list', has_more: false, first_id: ids.at(-1), last_id: ids[0] });
    expect(all.body.data.map((file: any) => file.id)).toEqual([...ids].reverse());

    const batches = made.filter((file) => file.purpose === 'batch').map((file) => file.id);
    const first = await call('GET', '/files?purpose=batch&limit=2', listing.key);
    expect(first.body.data.map((file: any) => file.id)).toEqual([batches[2], batches[1]]);
    expect(first.body.has_more).toBe(true);
    const second = await call('GET', `/files?purpose=batch&limit=2&after=${first.body.last_id}`, listing.key);
    expect(second.body.data.map((file: any) => file.id)).toEqual([batches[0]]);
    expect(second.body).toMatchObject({ has_more: false, first_id: batches[0], last_id: batches[0] });

    const ascending = await call('GET', '/files?order=asc&limit=3', listing.key);
    expect(ascending.body.data.map((file: any) => file.id)).toEqual(ids.slice(0, 3));
    const rest = await call('GET', `/files?order=asc&after=${ascending.body.last_id}`, listing.key);
    expect(rest.body.data.map((file: any) => file.id)).toEqual(ids.slice(3));
    expect((await call('GET', '/files?purpose=vision', listing.key)).body).toEqual({
      object: 'list',
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });

  it('refuses bad list queries naming the parameter', async () => {
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=10001', 'limit'],
      ['order=up', 'order'],
      ['after=file-abc', 'after'],
    ]) {
      const response = await call('GET', `/files?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error.param, query).toBe(param);
    }
    expect((await call('GET', '/files?limit=10000')).status).toBe(200);
  });

  it('deletes the record and its content', async () => {
    const created = await upload('{"custom_id":"a"}\n');
    expect(await objectExists(store.workspaceId, created.body.id)).toBe(true);
    const deleted = await call('DELETE', `/files/${created.body.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: created.body.id, object: 'file', deleted: true });
    expect(await objectExists(store.workspaceId, created.body.id)).toBe(false);
    for (const path of [`/files/${created.body.id}`, `/files/${created.body.id}/content`]) {
      const gone = await call('GET', path);
      expect(gone.status, path).toBe(404);
      expect(gone.body.error.code).toBe('file_not_found');
    }
    expect((await call('DELETE', `/files/${created.body.id}`)).status).toBe(404);
  });

  it('keeps workspaces apart: another workspace’s file is not found', async () => {
    const created = await upload('secret\n', { purpose: 'user_data' });
    const id = created.body.id;
    for (const [method, path] of [
      ['GET', `/files/${id}`],
      ['GET', `/files/${id}/content`],
      ['DELETE', `/files/${id}`],
    ] as const) {
      expect((await call(method, path, store.otherWorkspaceKey)).status, `${method} ${path}`).toBe(404);
    }
    const listed = await call('GET', '/files', store.otherWorkspaceKey);
    expect(listed.body.data.map((file: any) => file.id)).not.toContain(id);
    expect((await call('GET', `/files/${id}/content`)).bytes.toString()).toBe('secret\n');
  });

  it('answers 404 for ids no upload could have made, however long or odd', async () => {
    for (const id of ['gwf_', `gwf_${'a'.repeat(3000)}`, 'gwf_%2e%2e', 'gwf_01JD3ABCDEFGHJKMNPQRSTVWXY', 'file-abc123', 'anything']) {
      for (const path of [`/files/${id}`, `/files/${id}/content`]) {
        const response = await call('GET', path);
        expect(response.status, path.slice(0, 80)).toBe(404);
        expect(response.body.error.code).toBe('file_not_found');
      }
      expect((await call('DELETE', `/files/${id}`)).status).toBe(404);
    }
  });

  it('lets member keys use files', async () => {
    const member = await gatewayFetch('/api-keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-api-key': listing.key },
      body: JSON.stringify({ name: 'files member', role: 'member' }),
    });
    const memberKey = ((await member.json()) as any).key as string;
    expect(memberKey).toBeTruthy();
    const created = await upload('{}\n', { key: memberKey, purpose: 'evals' });
    expect(created.status).toBe(200);
    expect((await call('GET', `/files/${created.body.id}/content`, memberKey)).bytes.toString()).toBe('{}\n');
    expect((await call('DELETE', `/files/${created.body.id}`, memberKey)).status).toBe(200);
  });

  it('treats a gateway file id as the gateway’s even with provider headers', async () => {
    const created = await upload('mine\n');
    const headers = { 'x-gateway-provider': 'openai', authorization: 'Bearer sk-unused' };
    expect((await call('GET', `/files/${created.body.id}`, undefined, headers)).body.id).toBe(created.body.id);
    expect((await call('GET', `/files/${created.body.id}/content`, undefined, headers)).bytes.toString()).toBe('mine\n');
    expect((await call('DELETE', `/files/${created.body.id}`, undefined, headers)).body.deleted).toBe(true);
  });

  it('refuses a bad upload with a 400 naming the field', async () => {
    const badPurpose = await upload('x', { purpose: 'training' });
    expect(badPurpose.status).toBe(400);
    expect(badPurpose.body.error).toMatchObject({ param: 'purpose', code: 'invalid_purpose' });
    expect(badPurpose.body.error.message).toMatch(/batch, fine-tune/);

    const output = await upload('x', { purpose: 'batch_output' });
    expect(output.status).toBe(400);
    expect(output.body.error).toMatchObject({ param: 'purpose', code: 'invalid_purpose' });
    expect(output.body.error.message).toMatch(/written by the gateway/);

    const noPurpose = await upload('x', { purpose: '' });
    expect(noPurpose.body.error).toMatchObject({ param: 'purpose', code: 'missing_required_parameter' });

    const form = new FormData();
    form.append('purpose', 'batch');
    const noFile = await gatewayFetch('/files', { method: 'POST', body: form });
    expect(noFile.status).toBe(400);
    expect((await noFile.json()).error).toMatchObject({ param: 'file', code: 'missing_required_parameter' });

    const empty = await upload('');
    expect(empty.body.error).toMatchObject({ param: 'file', code: 'invalid_file' });

    const json = await gatewayFetch('/files', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"purpose":"batch"}' });
    expect(json.status).toBe(415);
    expect((await json.json()).error.message).toMatch(/multipart\/form-data/);

    const broken = await gatewayFetch('/files', {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch',
    });
    expect(broken.status).toBe(400);
    expect((await broken.json()).error.code).toBe('invalid_multipart');
  });

  it('refuses a body above the request limit with a 413 that points at the Uploads API', async () => {
    const tooLarge = await upload(randomBytes(5 * 1024 * 1024));
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error).toMatchObject({ param: 'file', code: 'request_too_large' });
    expect(tooLarge.body.error.message).toMatch(/Uploads API/);
  });

  it('answers 405 for a method the Files API does not take', async () => {
    const response = await call('PUT', '/files');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST, GET');
  });
});
