/**
 * The gateway's Files API through the official openai client, unchanged: a client with no provider
 * header uploads, lists, retrieves, reads and deletes the gateway's files; one that names a provider
 * still reaches the provider's own files API.
 */
import { randomBytes } from 'node:crypto';
import { NotFoundError, toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openaiClient } from '../support/gateway-client';

describe('the gateway’s files through the official openai client', () => {
  const client = openaiClient({ provider: null });

  it('creates, retrieves, reads, lists and deletes a file', async () => {
    const lines = `${JSON.stringify({ custom_id: 'r1', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [] } })}\n`;
    const binary = Buffer.concat([Buffer.from(lines), randomBytes(64 * 1024)]);
    const created = await client.files.create({ file: await toFile(binary, 'batch-input.jsonl'), purpose: 'batch' });
    expect(created).toMatchObject({ object: 'file', bytes: binary.length, filename: 'batch-input.jsonl', purpose: 'batch', status: 'processed' });
    expect(created.id).toMatch(/^gwf_/);

    expect(await client.files.retrieve(created.id)).toEqual(created);

    const content = await client.files.content(created.id);
    expect(Buffer.from(await content.arrayBuffer()).equals(binary)).toBe(true);

    const ids: string[] = [];
    for await (const file of client.files.list({ purpose: 'batch', limit: 2 })) ids.push(file.id);
    expect(ids).toContain(created.id);
    const page = await client.files.list({ purpose: 'batch', limit: 1, order: 'desc' });
    expect(page.data).toHaveLength(1);

    expect(await client.files.delete(created.id)).toEqual({ id: created.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('reports a bad purpose as the client’s BadRequestError naming the field', async () => {
    const error = await client.files.create({ file: await toFile(Buffer.from('x'), 'x.jsonl'), purpose: 'batch_output' as 'batch' }).catch((caught) => caught);
    expect(error.status).toBe(400);
    expect(error.param).toBe('purpose');
  });
});

describe('a provider’s files through the official openai client', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  it('uploads to the provider when the client names one', async () => {
    const answer = { id: 'file-xyz', object: 'file', bytes: 3, created_at: 1715367049, filename: 'p.jsonl', purpose: 'batch', status: 'processed' };
    upstream.script('/e2e-files/v1/files', [{ status: 200, json: answer }]);
    const provider = openaiClient({ headers: { 'x-gateway-custom-host': `${upstream.url}/e2e-files/v1` } });
    const created = await provider.files.create({ file: await toFile(Buffer.from('{}\n'), 'p.jsonl'), purpose: 'batch' });
    expect(created).toEqual(answer);
    const sent = upstream.requests.find((request) => request.path === '/e2e-files/v1/files')!;
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent.body.toString()).toContain('filename="p.jsonl"');
  });
});
