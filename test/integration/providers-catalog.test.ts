/**
 * The provider catalog (`/v1/providers`) against the shared gateway, plus the hot-path lookup
 * (`findProviderIntegration`) run in this process against the same emulator and master key file.
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { clearProviderIntegrationCache, findProviderIntegration, integrationAsConfig } from '../../lib/catalog/providers';
import { SecretDecryptionError } from '../../lib/secrets/envelope';
import { dynamoClient } from '../../lib/store/clients';
import { env, gatewayFetch } from '../support/gateway-client';
import { connectToGatewayStore, controlTable, secretCheckingCaller } from '../support/gateway-store';

const unique = () => randomBytes(4).toString('hex');
const secretKey = () => `sk-live-${randomBytes(24).toString('hex')}`;

/** Every credential value this file sends; no answer may ever contain one. */
const sentSecrets: string[] = [];

const call = secretCheckingCaller(sentSecrets);

function credential(value = secretKey()) {
  sentSecrets.push(value);
  return value;
}

async function createKey(role: 'admin' | 'member') {
  const { status, body } = await call('POST', '/api-keys', { name: `providers ${role}`, role });
  expect(status).toBe(200);
  return body.key as string;
}

const store = connectToGatewayStore();

describe('provider catalog: /v1/providers', () => {
  it('creates an integration and never answers with its credentials', async () => {
    const slug = `openai-${unique()}`;
    const apiKey = credential();
    const created = await call('POST', '/providers', { slug, provider: 'OpenAI', name: 'OpenAI production', api_key: apiKey, compat_organization: 'org-123' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      object: 'provider',
      slug,
      provider: 'openai',
      name: 'OpenAI production',
      custom_host: null,
      compat_organization: 'org-123',
      credentials: { api_key: `${apiKey.slice(0, 3)}…${apiKey.slice(-4)}` },
    });
    expect(created.body.id).toMatch(/^pvi_/);
    expect(created.body.created_at).toBeTypeOf('number');

    const got = await call('GET', `/providers/${slug}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created.body);

    const list = await call('GET', '/providers?limit=100');
    expect(list.body.object).toBe('list');
    expect(list.body.data.find((item: any) => item.slug === slug)).toEqual(created.body);
  });

  it('stores the credentials encrypted: the raw item holds a blob, never the plaintext', async () => {
    const slug = `cloud-${unique()}`;
    const apiKey = credential();
    const secretAccessKey = credential(`aws-secret-${randomBytes(16).toString('hex')}`);
    const privateKey = credential(`-----BEGIN PRIVATE KEY-----${randomBytes(16).toString('hex')}`);
    const created = await call('POST', '/providers', {
      slug,
      provider: 'openai',
      api_key: apiKey,
      cloudA_access_key_id: credential(`AKIA${randomBytes(8).toString('hex').toUpperCase()}`),
      cloudA_secret_access_key: secretAccessKey,
      cloudA_region: 'eu-west-1',
      cloudB_service_account_json: { type: 'service_account', private_key: privateKey },
      cloudB_region: 'europe-west4',
      deployments: [{ deployment_id: 'gpt4o', alias: 'default', api_version: '2024-10-21', is_default: true }],
      custom_host: 'https://models.example.com/v1/',
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      custom_host: 'https://models.example.com/v1',
      cloudA_region: 'eu-west-1',
      cloudB_region: 'europe-west4',
      deployments: [{ deployment_id: 'gpt4o', alias: 'default', api_version: '2024-10-21', is_default: true }],
      credentials: { cloudA_secret_access_key: 'set', cloudB_service_account_json: 'set' },
    });
    expect(Object.keys(created.body.credentials).sort()).toEqual([
      'api_key',
      'cloudA_access_key_id',
      'cloudA_secret_access_key',
      'cloudB_service_account_json',
    ]);

    const raw = await dynamoClient().send(
      new GetItemCommand({ TableName: controlTable, Key: marshall({ pk: `WS#${store.workspaceId}#PROVIDER#${slug}`, sk: 'PROVIDER' }), ConsistentRead: true }),
    );
    expect(raw.Item).toBeDefined();
    const item = unmarshall(raw.Item!);
    expect(item.secrets).toMatchObject({ v: 1, kp: 'local', dk: expect.any(String), iv: expect.any(String), ct: expect.any(String), tag: expect.any(String) });
    const stored = JSON.stringify(item);
    for (const secret of [apiKey, secretAccessKey, privateKey]) expect(stored).not.toContain(secret);
    expect(stored).not.toContain('PRIVATE KEY');

    // The hot path decrypts them.
    const found = await findProviderIntegration(store.workspaceId, `@${slug}`);
    expect(found?.credentials).toMatchObject({
      api_key: apiKey,
      cloudA_secret_access_key: secretAccessKey,
      cloudB_service_account_json: { private_key: privateKey },
    });
    expect(found?.settings).toMatchObject({ cloudA_region: 'eu-west-1', cloudB_region: 'europe-west4' });
    expect(integrationAsConfig(found!)).toMatchObject({
      provider: 'openai',
      custom_host: 'https://models.example.com/v1',
      api_key: apiKey,
      cloudA_region: 'eu-west-1',
    });
  });

  it('keeps the local master key in the data directory, readable by its owner only', async () => {
    await call('POST', '/providers', { slug: `mk-${unique()}`, provider: 'groq', api_key: credential() });
    const info = await stat(path.join(env().dataDir, 'master.key'));
    expect(info.size).toBe(32);
    if (process.platform !== 'win32') expect(info.mode & 0o777).toBe(0o600);
  });

  it('answers 409 for a slug already used in the workspace', async () => {
    const slug = `dup-${unique()}`;
    expect((await call('POST', '/providers', { slug, provider: 'openai', api_key: credential() })).status).toBe(200);
    const again = await call('POST', '/providers', { slug, provider: 'groq', api_key: credential() });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ type: 'conflict_error', param: 'slug', code: 'provider_slug_taken' });
    expect(again.body.error.message).toContain(slug);
  });

  it('validates input with messages that say what to send', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ provider: 'openai' }, 'slug', /slug is required/],
      [{ slug: 'Has_Upper', provider: 'openai' }, 'slug', /lowercase letters, digits or hyphens/],
      [{ slug: 'x'.repeat(65), provider: 'openai' }, 'slug', /1 to 64/],
      [{ slug: 'ok' }, 'provider', /provider is required: one of .*openai/],
      [{ slug: 'ok', provider: 'not-a-provider' }, 'provider', /Unknown provider "not-a-provider"; use one of .*groq/],
      [{ slug: 'ok', provider: 'openai', custom_host: 'ftp://example.com' }, 'custom_host', /custom_host .*https?/],
      [{ slug: 'ok', provider: 'openai', custom_host: 'https://user:pw@example.com/v1' }, 'custom_host', /custom_host .*credentials/],
      [{ slug: 'ok', provider: 'openai', custom_host: 7 }, 'custom_host', /custom_host must be a string/],
      [{ slug: 'ok', provider: 'openai', api_key: 42 }, 'api_key', /non-empty string/],
      [{ slug: 'ok', provider: 'openai', cloudB_service_account_json: 'text' }, 'cloudB_service_account_json', /JSON object/],
      [{ slug: 'ok', provider: 'openai', cloudC_deployment_type: 'spot' }, 'cloudC_deployment_type', /serverless.*managed/],
      [{ slug: 'ok', provider: 'openai', deployments: [{ alias: 'a' }] }, 'deployments[0].deployment_id', /required/],
      [{ slug: 'ok', provider: 'openai', secret_sauce: 1 }, 'secret_sauce', /Unknown field "secret_sauce"/],
      [{ slug: 'ok', provider: 'openai', name: '' }, 'name', /1 to 255/],
    ];
    for (const [body, param, message] of cases) {
      const response = await call('POST', '/providers', body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error.param, JSON.stringify(body)).toBe(param);
      expect(response.body.error.message, JSON.stringify(body)).toMatch(message);
    }
    const notJson = await gatewayFetch('/providers', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(notJson.status).toBe(415);
  });

  it('replaces non-secret fields on PUT and credentials only when given', async () => {
    const slug = `put-${unique()}`;
    const first = credential();
    const created = await call('POST', '/providers', { slug, provider: 'openai', name: 'before', api_key: first, compat_organization: 'org-1' });
    expect(created.status).toBe(200);
    expect((await findProviderIntegration(store.workspaceId, slug))?.credentials.api_key).toBe(first);

    // An answer edited and sent back: credentials kept, absent settings cleared.
    const { credentials: _credentials, compat_organization: _organization, ...edited } = created.body;
    const renamed = await call('PUT', `/providers/${slug}`, { ...edited, name: 'after' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      id: created.body.id,
      slug,
      name: 'after',
      provider: 'openai',
      credentials: created.body.credentials,
      created_at: created.body.created_at,
    });
    expect(renamed.body.compat_organization).toBeUndefined();

    // Another provider is another host: the stored key does not follow it unless it is sent again.
    const moved = await call('PUT', `/providers/${slug}`, { ...edited, name: 'after', provider: 'groq' });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toMatchObject({ code: 'credentials_required' });

    const second = credential();
    const rotated = await call('PUT', `/providers/${slug}`, { provider: 'groq', name: 'after', api_key: second });
    expect(rotated.body.credentials.api_key).toBe(`${second.slice(0, 3)}…${second.slice(-4)}`);
    // The hot path sees the change within its 5 s cache.
    clearProviderIntegrationCache();
    const found = await findProviderIntegration(store.workspaceId, slug);
    expect(found).toMatchObject({ provider: 'groq', name: 'after', credentials: { api_key: second } });
    expect(Object.isFrozen(found) && Object.isFrozen(found!.credentials)).toBe(true);

    const removed = await call('PUT', `/providers/${slug}`, { provider: 'ollama', api_key: null });
    expect(removed.status).toBe(200);
    expect(removed.body.credentials).toEqual({});
    expect(removed.body.name).toBe(slug);

    const masked = await call('PUT', `/providers/${slug}`, { provider: 'openai', api_key: 'set' });
    expect(masked.status).toBe(400);
    expect(masked.body.error.param).toBe('api_key');

    const renameSlug = await call('PUT', `/providers/${slug}`, { slug: 'another', provider: 'openai' });
    expect(renameSlug.status).toBe(400);
    expect(renameSlug.body.error).toMatchObject({ param: 'slug' });
    expect(renameSlug.body.error.message).toMatch(/cannot be changed/);

    expect((await call('PUT', `/providers/missing-${unique()}`, { provider: 'openai' })).status).toBe(404);
  });

  it('deletes an integration; the hot path stops finding it within seconds', async () => {
    const slug = `del-${unique()}`;
    const apiKey = credential();
    expect((await call('POST', '/providers', { slug, provider: 'openai', api_key: apiKey })).status).toBe(200);
    expect((await findProviderIntegration(store.workspaceId, `@${slug}`))?.credentials.api_key).toBe(apiKey);

    const deleted = await call('DELETE', `/providers/${slug}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ slug, object: 'provider', deleted: true });
    expect((await call('GET', `/providers/${slug}`)).status).toBe(404);
    const again = await call('DELETE', `/providers/${slug}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('provider_not_found');

    const deadline = Date.now() + 7_000;
    let found = await findProviderIntegration(store.workspaceId, slug);
    while (found && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      found = await findProviderIntegration(store.workspaceId, slug);
    }
    expect(found).toBeUndefined();
  });

  it('lists newest first with a cursor', async () => {
    const a = await call('POST', '/providers', { slug: `page-a-${unique()}`, provider: 'openai' });
    const b = await call('POST', '/providers', { slug: `page-b-${unique()}`, provider: 'openai' });
    const first = await call('GET', '/providers?limit=1');
    expect(first.body.data[0].id).toBe(b.body.id);
    expect(first.body.has_more).toBe(true);
    const second = await call('GET', `/providers?limit=1&after=${first.body.last_id}`);
    expect(second.body.data[0].id).toBe(a.body.id);
    expect((await call('GET', '/providers?limit=0')).status).toBe(400);
  });

  it('lets members read the catalog and only admins change it', async () => {
    const slug = `roles-${unique()}`;
    expect((await call('POST', '/providers', { slug, provider: 'openai', api_key: credential() })).status).toBe(200);
    const member = await createKey('member');
    expect((await call('GET', '/providers', undefined, member)).status).toBe(200);
    expect((await call('GET', `/providers/${slug}`, undefined, member)).status).toBe(200);
    for (const [method, urlPath, body] of [
      ['POST', '/providers', { slug: `m-${unique()}`, provider: 'openai' }],
      ['PUT', `/providers/${slug}`, { provider: 'openai' }],
      ['DELETE', `/providers/${slug}`, undefined],
    ] as const) {
      const response = await call(method, urlPath, body, member);
      expect(response.status, `${method} ${urlPath}`).toBe(403);
      expect(response.body.error.message).toMatch(/admin/);
    }
    expect((await call('GET', `/providers/${slug}`)).status).toBe(200);
  });

  it('keeps workspaces apart', async () => {
    const slug = `iso-${unique()}`;
    const apiKey = credential();
    expect((await call('POST', '/providers', { slug, provider: 'openai', api_key: apiKey })).status).toBe(200);

    // The other workspace sees nothing of it, and may use the same slug for its own integration.
    expect((await call('GET', `/providers/${slug}`, undefined, store.otherWorkspaceKey)).status).toBe(404);
    expect((await call('DELETE', `/providers/${slug}`, undefined, store.otherWorkspaceKey)).status).toBe(404);
    expect((await call('PUT', `/providers/${slug}`, { provider: 'openai' }, store.otherWorkspaceKey)).status).toBe(404);
    const list = await call('GET', '/providers?limit=100', undefined, store.otherWorkspaceKey);
    expect(list.body.data.map((item: any) => item.slug)).not.toContain(slug);
    const otherKey = credential();
    expect((await call('POST', '/providers', { slug, provider: 'groq', api_key: otherKey }, store.otherWorkspaceKey)).status).toBe(200);
    expect((await findProviderIntegration(store.otherWorkspaceId, slug))?.credentials.api_key).toBe(otherKey);
    expect((await findProviderIntegration(store.workspaceId, slug))?.credentials.api_key).toBe(apiKey);
    expect((await call('GET', `/providers/${slug}`)).body.provider).toBe('openai');

    // A blob copied into another workspace's item does not decrypt there.
    const raw = await dynamoClient().send(
      new GetItemCommand({ TableName: controlTable, Key: marshall({ pk: `WS#${store.workspaceId}#PROVIDER#${slug}`, sk: 'PROVIDER' }), ConsistentRead: true }),
    );
    const item = unmarshall(raw.Item!);
    const thief = `ws_thief_${unique()}`;
    await dynamoClient().send(
      new PutItemCommand({
        TableName: controlTable,
        Item: marshall({ ...item, pk: `WS#${thief}#PROVIDER#${slug}`, gsi1pk: `WS#${thief}#PROVIDER`, workspace_id: thief }),
      }),
    );
    await expect(findProviderIntegration(thief, slug)).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('resolves slugs and legacy virtual keys the same way, and nothing else', async () => {
    const slug = `vk-${unique()}`;
    expect((await call('POST', '/providers', { slug, provider: 'openai', api_key: credential() })).status).toBe(200);
    const bySlug = await findProviderIntegration(store.workspaceId, `@${slug}`);
    expect(bySlug?.slug).toBe(slug);
    expect(await findProviderIntegration(store.workspaceId, slug)).toBe(bySlug);
    expect((await findProviderIntegration(store.workspaceId, `@${slug.toUpperCase()}`))?.id).toBe(bySlug?.id);
    expect(await findProviderIntegration(store.workspaceId, '@not here!')).toBeUndefined();
    expect(await findProviderIntegration(store.workspaceId, `@unknown-${unique()}`)).toBeUndefined();
    expect((await call('GET', '/providers/Not_A_Slug')).status).toBe(404);
  });
});
