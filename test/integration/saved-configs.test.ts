/**
 * Saved configs (`/v1/configs`) against the shared gateway, plus the hot-path lookup
 * (`findSavedConfig`) run in this process against the same emulator and master key file.
 */
import { randomBytes } from 'node:crypto';
import { PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { clearSavedConfigCache, findSavedConfig, maskConfigSecrets, parseConfigRef } from '../../lib/config/saved-configs';
import { SecretDecryptionError } from '../../lib/secrets/envelope';
import { dynamoClient } from '../../lib/store/clients';
import { connectToGatewayStore, controlTable, secretCheckingCaller } from '../support/gateway-store';

const unique = () => randomBytes(4).toString('hex');

/** Every secret value this file sends; no answer may ever contain one. */
const sentSecrets: string[] = [];
function secret(prefix = 'sk-cfg-') {
  const value = `${prefix}${randomBytes(20).toString('hex')}`;
  sentSecrets.push(value);
  return value;
}

const call = secretCheckingCaller(sentSecrets);

const store = connectToGatewayStore();

function fallbackConfig(keys: { primary: string; backup: string; secretAccessKey: string; privateKey: string }) {
  return {
    strategy: { mode: 'fallback', on_status_codes: [429, 500] },
    retry: { attempts: 2 },
    targets: [
      { provider: 'openai', api_key: keys.primary, override_params: { model: 'gpt-4o-mini' } },
      {
        provider: 'groq',
        api_key: keys.backup,
        cloudA_access_key_id: 'AKIAEXAMPLE',
        cloudA_secret_access_key: keys.secretAccessKey,
        cloudB_service_account_json: { type: 'service_account', private_key: keys.privateKey },
      },
    ],
  };
}

const newKeys = () => ({ primary: secret(), backup: secret(), secretAccessKey: secret('aws-'), privateKey: secret('-----BEGIN PRIVATE KEY-----') });

describe('saved configs: /v1/configs', () => {
  it('saves a config as version 1 and answers with its secrets masked everywhere in the tree', async () => {
    const keys = newKeys();
    const config = fallbackConfig(keys);
    const created = await call('POST', '/configs', { name: 'prod fallback', config });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ object: 'config', name: 'prod fallback', version: 1, versions: 1 });
    expect(created.body.id).toMatch(/^cfg_[0-9a-z]{26}$/);
    expect(created.body.created_at).toBeTypeOf('number');
    expect(created.body.updated_at).toBe(created.body.created_at);
    expect(created.body.config).toEqual(maskConfigSecrets(config));
    expect(created.body.config.targets[0].api_key).toBe('********');
    expect(created.body.config.targets[1]).toMatchObject({
      api_key: '********',
      cloudA_access_key_id: 'AKIAEXAMPLE',
      cloudA_secret_access_key: '********',
      cloudB_service_account_json: '********',
    });
    expect(created.body.config.targets[0].override_params).toEqual({ model: 'gpt-4o-mini' });

    const got = await call('GET', `/configs/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: created.body.id, name: 'prod fallback', version: 1, versions: 1, config: created.body.config });

    // The hot path gets the real thing.
    const found = await findSavedConfig(store.workspaceId, created.body.id);
    expect(found).toEqual({ id: created.body.id, version: 1, config });
    expect(Object.isFrozen(found!.config)).toBe(true);
  });

  it('stores configs encrypted: no item holds a secret in clear', async () => {
    const keys = newKeys();
    const created = await call('POST', '/configs', { name: 'encrypted', config: fallbackConfig(keys) });
    expect(created.status).toBe(200);
    expect((await call('PUT', `/configs/${created.body.id}`, { config: fallbackConfig(keys) })).status).toBe(200);
    const result = await dynamoClient().send(
      new QueryCommand({
        TableName: controlTable,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': `WS#${store.workspaceId}#CONFIG#${created.body.id}` }),
        ConsistentRead: true,
      }),
    );
    const items = (result.Items ?? []).map((item) => unmarshall(item));
    expect(items.map((item) => item.sk).sort()).toEqual(['CONFIG', 'V#0000000001', 'V#0000000002']);
    for (const item of items) {
      expect(item.config).toMatchObject({ v: 1, kp: 'local', ct: expect.any(String) });
      const stored = JSON.stringify(item);
      for (const value of Object.values(keys)) expect(stored).not.toContain(value);
      expect(stored).not.toContain('PRIVATE KEY');
      expect(stored).not.toContain('gpt-4o-mini');
    }
  });

  it('stores a new version on PUT and keeps the old ones readable', async () => {
    const created = await call('POST', '/configs', { name: 'versions', config: { provider: 'openai', override_params: { model: 'v1-model' } } });
    const id = created.body.id;
    const second = await call('PUT', `/configs/${id}`, { config: { provider: 'openai', override_params: { model: 'v2-model' } } });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id, name: 'versions', version: 2, versions: 2, created_at: created.body.created_at });
    const third = await call('PUT', `/configs/${id}`, { name: 'renamed', config: { provider: 'openai', override_params: { model: 'v3-model' } } });
    expect(third.body).toMatchObject({ version: 3, versions: 3, name: 'renamed' });

    const latest = await call('GET', `/configs/${id}`);
    expect(latest.body).toMatchObject({ version: 3, versions: 3, name: 'renamed', config: { override_params: { model: 'v3-model' } } });
    for (const [version, model] of [
      [1, 'v1-model'],
      [2, 'v2-model'],
      [3, 'v3-model'],
    ] as const) {
      const pinned = await call('GET', `/configs/${id}@${version}`);
      expect(pinned.status, `@${version}`).toBe(200);
      expect(pinned.body).toMatchObject({ id, version, versions: 3, config: { provider: 'openai', override_params: { model } } });
      expect((await findSavedConfig(store.workspaceId, `${id}@${version}`))?.config.override_params).toEqual({ model });
    }
    expect((await call('GET', `/configs/${id}%403`)).body.version).toBe(3);
    expect((await call('GET', `/configs/${id}@latest`)).body.version).toBe(3);
    expect((await call('GET', `/configs/${id}@4`)).status).toBe(404);
    expect((await call('GET', `/configs/${id}@0`)).status).toBe(404);

    // The hot path sees the latest version within its 5 s cache.
    clearSavedConfigCache();
    expect(await findSavedConfig(store.workspaceId, id)).toMatchObject({ id, version: 3 });
    expect(await findSavedConfig(store.workspaceId, `${id}@9`)).toBeUndefined();

    const pinnedPut = await call('PUT', `/configs/${id}@2`, { config: { provider: 'openai' } });
    expect(pinnedPut.status).toBe(400);
    expect(pinnedPut.body.error.message).toMatch(/without a version/);
  });

  it('keeps masked secrets of an answer sent back, and refuses placeholders it cannot fill', async () => {
    const keys = newKeys();
    const created = await call('POST', '/configs', { name: 'round trip', config: fallbackConfig(keys) });
    const id = created.body.id;
    // Edit the answer (masked) and send it back.
    const edited = structuredClone(created.body);
    edited.config.retry.attempts = 3;
    const updated = await call('PUT', `/configs/${id}`, edited);
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ version: 2, config: { retry: { attempts: 3 }, targets: [{ api_key: '********' }, { api_key: '********' }] } });
    const found = await findSavedConfig(store.workspaceId, id);
    expect(found?.config).toEqual({ ...fallbackConfig(keys), retry: { attempts: 3 } });

    // A placeholder where the latest version has no secret cannot be filled.
    const extra = structuredClone(edited);
    extra.config.targets.push({ provider: 'openai', api_key: '********' });
    const refused = await call('PUT', `/configs/${id}`, extra);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'AB01', param: 'config.targets[2].api_key' });
    expect(refused.body.error.message).toMatch(/mask placeholder/);

    const onCreate = await call('POST', '/configs', { name: 'placeholder', config: { provider: 'openai', api_key: '********' } });
    expect(onCreate.status).toBe(400);
    expect(onCreate.body.error).toMatchObject({ code: 'AB01', param: 'config.api_key' });
  });

  it('validates configs when saved (AB01 with the path of the problem)', async () => {
    const invalid = await call('POST', '/configs', { name: 'bad', config: { retry: { attempts: 10 } } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({ type: 'invalid_request_error', code: 'AB01', param: 'config.retry.attempts' });
    expect(invalid.body.error.message).toMatch(/config\.retry\.attempts/);

    const nested = await call('POST', '/configs', {
      name: 'bad nested',
      config: {
        strategy: { mode: 'fallback' },
        targets: [
          { provider: 'openai', api_key: 'a' },
          { provider: 'openai', api_key: 'b', retry: { attempts: 9 } },
        ],
      },
    });
    expect(nested.status).toBe(400);
    expect(nested.body.error).toMatchObject({ code: 'AB01', param: 'config.targets[1].retry.attempts' });

    const unknownKey = await call('POST', '/configs', { config: { provider: 'openai', api_kye: 'x' } });
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.body.error).toMatchObject({ code: 'AB01', param: 'config.api_kye' });

    const created = await call('POST', '/configs', { name: 'valid', config: { provider: 'openai' } });
    const badUpdate = await call('PUT', `/configs/${created.body.id}`, { config: { cache: { mode: 'sometimes' } } });
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.body.error).toMatchObject({ code: 'AB01', param: 'config.cache.mode' });
    expect((await call('GET', `/configs/${created.body.id}`)).body.versions).toBe(1);

    const body: Array<[unknown, string, RegExp]> = [
      [{ name: 'no config' }, 'config', /config is required/],
      [{ name: 42, config: { provider: 'openai' } }, 'name', /1 to 255/],
      [{ config: { provider: 'openai' }, extra: true }, 'extra', /Unknown field "extra"/],
    ];
    for (const [input, param, message] of body) {
      const response = await call('POST', '/configs', input);
      expect(response.status, JSON.stringify(input)).toBe(400);
      expect(response.body.error.param).toBe(param);
      expect(response.body.error.message).toMatch(message);
    }
    const tooBig = await call('POST', '/configs', { config: { provider: 'openai', override_params: { blob: 'x'.repeat(210 * 1024) } } });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.error.code).toBe('config_too_large');
  });

  it('lists configs newest first with a cursor, without their bodies', async () => {
    const a = await call('POST', '/configs', { name: 'page a', config: { provider: 'openai', api_key: secret() } });
    const b = await call('POST', '/configs', { name: 'page b', config: { provider: 'openai', api_key: secret() } });
    await call('PUT', `/configs/${a.body.id}`, { config: { provider: 'groq' } });
    const first = await call('GET', '/configs?limit=1');
    expect(first.body).toMatchObject({ object: 'list', has_more: true, first_id: b.body.id, last_id: b.body.id });
    expect(first.body.data[0]).toEqual({
      object: 'config',
      id: b.body.id,
      name: 'page b',
      version: 1,
      versions: 1,
      created_at: b.body.created_at,
      updated_at: b.body.updated_at,
    });
    const second = await call('GET', `/configs?limit=1&after=${first.body.last_id}`);
    expect(second.body.data[0]).toMatchObject({ id: a.body.id, version: 2, versions: 2 });
  });

  it('deletes a config with all its versions', async () => {
    const created = await call('POST', '/configs', { name: 'to delete', config: { provider: 'openai', api_key: secret() } });
    const id = created.body.id;
    await call('PUT', `/configs/${id}`, { config: { provider: 'groq' } });
    expect(await findSavedConfig(store.workspaceId, id)).toMatchObject({ version: 2 });

    const deleted = await call('DELETE', `/configs/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id, object: 'config', deleted: true });
    for (const ref of [id, `${id}@1`, `${id}@2`]) expect((await call('GET', `/configs/${ref}`)).status, ref).toBe(404);
    expect((await call('DELETE', `/configs/${id}`)).status).toBe(404);
    expect((await call('PUT', `/configs/${id}`, { config: { provider: 'openai' } })).status).toBe(404);
    const list = await call('GET', '/configs?limit=100');
    expect(list.body.data.map((item: any) => item.id)).not.toContain(id);
    const left = await dynamoClient().send(
      new QueryCommand({
        TableName: controlTable,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': `WS#${store.workspaceId}#CONFIG#${id}` }),
        ConsistentRead: true,
      }),
    );
    expect(left.Items).toEqual([]);
    clearSavedConfigCache();
    expect(await findSavedConfig(store.workspaceId, id)).toBeUndefined();
    expect(await findSavedConfig(store.workspaceId, `${id}@1`)).toBeUndefined();
  });

  it('lets members read configs and only admins change them', async () => {
    const created = await call('POST', '/configs', { name: 'roles', config: { provider: 'openai', api_key: secret() } });
    const keyResponse = await call('POST', '/api-keys', { name: 'configs member', role: 'member' });
    const member = keyResponse.body.key as string;
    expect((await call('GET', '/configs', undefined, member)).status).toBe(200);
    const read = await call('GET', `/configs/${created.body.id}`, undefined, member);
    expect(read.status).toBe(200);
    expect(read.body.config.api_key).toBe('********');
    for (const [method, urlPath, body] of [
      ['POST', '/configs', { config: { provider: 'openai' } }],
      ['PUT', `/configs/${created.body.id}`, { config: { provider: 'openai' } }],
      ['DELETE', `/configs/${created.body.id}`, undefined],
    ] as const) {
      const response = await call(method, urlPath, body, member);
      expect(response.status, `${method} ${urlPath}`).toBe(403);
      expect(response.body.error.message).toMatch(/admin/);
    }
    expect((await call('GET', `/configs/${created.body.id}`)).body.versions).toBe(1);
  });

  it('keeps workspaces apart', async () => {
    const apiKey = secret();
    const created = await call('POST', '/configs', { name: 'isolated', config: { provider: 'openai', api_key: apiKey } });
    const id = created.body.id;
    expect((await call('GET', `/configs/${id}`, undefined, store.otherWorkspaceKey)).status).toBe(404);
    expect((await call('GET', `/configs/${id}@1`, undefined, store.otherWorkspaceKey)).status).toBe(404);
    expect((await call('PUT', `/configs/${id}`, { config: { provider: 'openai' } }, store.otherWorkspaceKey)).status).toBe(404);
    expect((await call('DELETE', `/configs/${id}`, undefined, store.otherWorkspaceKey)).status).toBe(404);
    const list = await call('GET', '/configs?limit=100', undefined, store.otherWorkspaceKey);
    expect(list.body.data.map((item: any) => item.id)).not.toContain(id);
    expect(await findSavedConfig(store.otherWorkspaceId, id)).toBeUndefined();
    expect((await call('GET', `/configs/${id}`)).status).toBe(200);

    // The encrypted items copied into another workspace do not decrypt there.
    const thief = `ws_thief_${unique()}`;
    const items = await dynamoClient().send(
      new QueryCommand({
        TableName: controlTable,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: marshall({ ':pk': `WS#${store.workspaceId}#CONFIG#${id}` }),
        ConsistentRead: true,
      }),
    );
    for (const raw of items.Items ?? []) {
      const item = unmarshall(raw);
      const copy = { ...item, pk: `WS#${thief}#CONFIG#${id}`, ...(item.gsi1pk ? { gsi1pk: `WS#${thief}#CONFIG`, workspace_id: thief } : {}) };
      await dynamoClient().send(new PutItemCommand({ TableName: controlTable, Item: marshall(copy) }));
    }
    await expect(findSavedConfig(thief, id)).rejects.toBeInstanceOf(SecretDecryptionError);
    await expect(findSavedConfig(thief, `${id}@1`)).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('parses references strictly', async () => {
    expect(parseConfigRef('cfg_abc')).toEqual({ id: 'cfg_abc' });
    expect(parseConfigRef('cfg_abc@12')).toEqual({ id: 'cfg_abc', version: 12 });
    expect(parseConfigRef('cfg_abc@latest')).toEqual({ id: 'cfg_abc' });
    for (const bad of ['', 'abc', 'cfg_', 'cfg_ABC', 'cfg_abc@', 'cfg_abc@0', 'cfg_abc@-1', 'cfg_abc@1.5', '{"provider":"openai"}']) {
      expect(parseConfigRef(bad), bad).toBeUndefined();
      expect(await findSavedConfig(store.workspaceId, bad), bad).toBeUndefined();
    }
    expect((await call('GET', '/configs/not-a-config-id')).status).toBe(404);
    expect((await call('GET', `/configs/cfg_${unique()}`)).body.error.code).toBe('config_not_found');
  });
});
