import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearDataKeyCache, decryptSecrets, encryptSecrets, SecretDecryptionError, type EncryptedBlob } from '../../lib/secrets/envelope';

/** A stand-in for KMS: wraps data keys under its own key, bound to the encryption context. */
const fakeKms = vi.hoisted(() => {
  const calls: Array<{ command: string; input: any }> = [];
  return { calls, masterKey: undefined as Buffer | undefined };
});

vi.mock('../../lib/store/clients', () => ({
  kmsClient: () => ({
    async send(command: { constructor: { name: string }; input: any }) {
      const name = command.constructor.name;
      fakeKms.calls.push({ command: name, input: command.input });
      fakeKms.masterKey ??= randomBytes(32);
      const aad = Buffer.from(JSON.stringify(command.input.EncryptionContext ?? {}));
      if (name === 'GenerateDataKeyCommand') {
        const plaintext = randomBytes(32);
        const iv = randomBytes(12);
        const cipher = createCipheriv('aes-256-gcm', fakeKms.masterKey, iv).setAAD(aad);
        const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
        return { Plaintext: new Uint8Array(plaintext), CiphertextBlob: new Uint8Array(Buffer.concat([iv, cipher.getAuthTag(), ct])) };
      }
      if (name === 'DecryptCommand') {
        const blob = Buffer.from(command.input.CiphertextBlob);
        try {
          const decipher = createDecipheriv('aes-256-gcm', fakeKms.masterKey, blob.subarray(0, 12)).setAAD(aad);
          decipher.setAuthTag(blob.subarray(12, 28));
          return { Plaintext: new Uint8Array(Buffer.concat([decipher.update(blob.subarray(28)), decipher.final()])) };
        } catch {
          throw Object.assign(new Error('InvalidCiphertextException'), { name: 'InvalidCiphertextException' });
        }
      }
      throw new Error(`unexpected KMS command ${name}`);
    },
  }),
}));

const savedEnv = { ...process.env };
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'envelope-test-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  process.env = { ...savedEnv };
  clearDataKeyCache();
});

const secrets = {
  api_key: 'sk-test-0123456789abcdefghijklmnop',
  cloudB_service_account_json: { type: 'service_account', private_key: '-----BEGIN PRIVATE KEY-----xyz' },
};

function flipByte(base64: string): string {
  const bytes = Buffer.from(base64, 'base64');
  bytes[0] ^= 0x01;
  return bytes.toString('base64');
}

describe('envelope encryption, local master key', () => {
  let keyFile: string;
  beforeEach(() => {
    keyFile = path.join(dir, `local-${Math.random().toString(36).slice(2)}`, 'master.key');
    process.env.GATEWAY_MODE = 'local';
    process.env.GATEWAY_LOCAL_MASTER_KEY_FILE = keyFile;
  });

  it('round-trips strings and objects, and the blob does not contain the plaintext', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    expect(blob).toMatchObject({ v: 1, kp: 'local' });
    expect(JSON.stringify(blob)).not.toContain('sk-test');
    expect(JSON.stringify(blob)).not.toContain('PRIVATE KEY');
    expect(await decryptSecrets(blob, 'ws_a')).toEqual(secrets);
    // Without the cached data key too (the master key unwraps it again).
    clearDataKeyCache();
    expect(await decryptSecrets(blob, 'ws_a')).toEqual(secrets);
  });

  it('uses a fresh data key and nonce for every blob', async () => {
    const a = await encryptSecrets(secrets, 'ws_a');
    const b = await encryptSecrets(secrets, 'ws_a');
    expect(a.dk).not.toBe(b.dk);
    expect(a.iv).not.toBe(b.iv);
    expect(a.ct).not.toBe(b.ct);
  });

  it('refuses a tampered ciphertext, tag, nonce or wrapped key', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    for (const field of ['ct', 'tag', 'iv', 'dk'] as const) {
      clearDataKeyCache();
      const tampered: EncryptedBlob = { ...blob, [field]: flipByte(blob[field]) };
      await expect(decryptSecrets(tampered, 'ws_a'), field).rejects.toBeInstanceOf(SecretDecryptionError);
    }
    await expect(decryptSecrets({ ...blob, ct: '' }, 'ws_a')).rejects.toBeInstanceOf(SecretDecryptionError);
    await expect(decryptSecrets({ nope: true } as unknown as EncryptedBlob, 'ws_a')).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('refuses a blob copied to another workspace, with or without the data key cached', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    await expect(decryptSecrets(blob, 'ws_b')).rejects.toBeInstanceOf(SecretDecryptionError);
    clearDataKeyCache();
    const error = await decryptSecrets(blob, 'ws_b').catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(SecretDecryptionError);
    expect(String((error as Error).message)).not.toContain('sk-test');
  });

  it('creates the master key file on first use: 32 random bytes, mode 0600, then reuses it', async () => {
    await expect(stat(keyFile)).rejects.toMatchObject({ code: 'ENOENT' });
    const blob = await encryptSecrets({ api_key: 'x' }, 'ws_a');
    const created = await stat(keyFile);
    if (process.platform !== 'win32') expect(created.mode & 0o777).toBe(0o600);
    const bytes = await readFile(keyFile);
    expect(bytes.length).toBe(32);
    await encryptSecrets({ api_key: 'y' }, 'ws_a');
    expect(await readFile(keyFile)).toEqual(bytes);
    clearDataKeyCache();
    expect(await decryptSecrets(blob, 'ws_a')).toEqual({ api_key: 'x' });
  });

  it('cannot open a blob after the master key changed', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    clearDataKeyCache();
    process.env.GATEWAY_LOCAL_MASTER_KEY_FILE = path.join(dir, 'another', 'master.key');
    await expect(decryptSecrets(blob, 'ws_a')).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('says what to set when the master key file is not configured', async () => {
    delete process.env.GATEWAY_LOCAL_MASTER_KEY_FILE;
    await expect(encryptSecrets(secrets, 'ws_a')).rejects.toThrow(/GATEWAY_LOCAL_MASTER_KEY_FILE/);
  });
});

describe('envelope encryption, AWS KMS', () => {
  beforeEach(() => {
    process.env.GATEWAY_MODE = 'aws';
    process.env.GATEWAY_KMS_KEY_ID = 'key-1234';
    fakeKms.calls.length = 0;
  });

  it('wraps each blob’s data key with KMS, bound to the workspace as encryption context', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    expect(blob.kp).toBe('kms');
    expect(fakeKms.calls).toEqual([
      { command: 'GenerateDataKeyCommand', input: { KeyId: 'key-1234', KeySpec: 'AES_256', EncryptionContext: { workspace_id: 'ws_a' } } },
    ]);
    clearDataKeyCache();
    expect(await decryptSecrets(blob, 'ws_a')).toEqual(secrets);
    expect(fakeKms.calls[1]).toMatchObject({ command: 'DecryptCommand', input: { KeyId: 'key-1234', EncryptionContext: { workspace_id: 'ws_a' } } });
  });

  it('caches unwrapped data keys so the hot path does not call KMS per request', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    clearDataKeyCache();
    for (let i = 0; i < 5; i++) expect(await decryptSecrets(blob, 'ws_a')).toEqual(secrets);
    expect(fakeKms.calls.filter((call) => call.command === 'DecryptCommand')).toHaveLength(1);
  });

  it('refuses a blob copied to another workspace (KMS rejects the encryption context)', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    await expect(decryptSecrets(blob, 'ws_b')).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('refuses a tampered ciphertext', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    await expect(decryptSecrets({ ...blob, ct: flipByte(blob.ct) }, 'ws_a')).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('does not open a KMS blob in local mode, nor a local blob on AWS', async () => {
    const blob = await encryptSecrets(secrets, 'ws_a');
    process.env.GATEWAY_MODE = 'local';
    process.env.GATEWAY_LOCAL_MASTER_KEY_FILE = path.join(dir, 'mixed', 'master.key');
    await expect(decryptSecrets(blob, 'ws_a')).rejects.toBeInstanceOf(SecretDecryptionError);
    const local = await encryptSecrets(secrets, 'ws_a');
    process.env.GATEWAY_MODE = 'aws';
    await expect(decryptSecrets(local, 'ws_a')).rejects.toBeInstanceOf(SecretDecryptionError);
  });
});
