import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defaultProvider } from '../../lib/store/lambda-credentials';

const ROLE = { accessKeyId: 'ASIAEXAMPLEROLEKEY01', secretAccessKey: 'role-secret', sessionToken: 'role-session-token' };

function setRoleEnvironment(role = ROLE): void {
  vi.stubEnv('AWS_ACCESS_KEY_ID', role.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', role.secretAccessKey);
  vi.stubEnv('AWS_SESSION_TOKEN', role.sessionToken);
}

beforeEach(() => {
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_CREDENTIAL_EXPIRATION', 'AWS_PROFILE']) {
    vi.stubEnv(name, undefined);
  }
});

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the function bundles’ credential provider', () => {
  it('gives the function role’s credentials from the environment, read once per client', async () => {
    setRoleEnvironment();
    const provider = defaultProvider();
    const first = await provider();
    expect(first).toMatchObject(ROLE);
    setRoleEnvironment({ accessKeyId: 'ASIAOTHERKEY', secretAccessKey: 'other', sessionToken: 'other' });
    expect(await provider()).toBe(first);
  });

  it('names the variables it reads when they are missing, and reads them again on the next call', async () => {
    const provider = defaultProvider();
    await expect(provider()).rejects.toThrow(/AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN/);
    setRoleEnvironment();
    await expect(provider()).resolves.toMatchObject(ROLE);
  });

  it('serves an SDK client the way the default chain it replaces does', async () => {
    setRoleEnvironment();
    const client = new DynamoDBClient({ region: 'us-east-1', credentialDefaultProvider: defaultProvider });
    try {
      await expect(client.config.credentials()).resolves.toMatchObject(ROLE);
    } finally {
      client.destroy();
    }
  });
});
