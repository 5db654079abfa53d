/**
 * Envelope encryption of stored secrets (provider credentials, saved configs).
 *
 * Every blob is sealed with AES-256-GCM under its own random 256-bit data key. The data key is
 * stored next to the ciphertext, wrapped:
 *
 * - on AWS by KMS (`GenerateDataKey` / `Decrypt` on `GATEWAY_KMS_KEY_ID`, with the encryption
 *   context `{ workspace_id }`);
 * - locally (`GATEWAY_MODE=local`) by AES-256-GCM under a 32-byte master key read from
 *   `GATEWAY_LOCAL_MASTER_KEY_FILE`, created (mode 0600) on first use.
 *
 * The workspace id is bound to both layers (KMS encryption context / AAD of the key wrap, and AAD of
 * the payload), so a blob copied into another workspace's item does not decrypt.
 *
 * Unwrapped data keys are cached in memory (bounded, short TTL) so the hot path does not call KMS on
 * every request. Nothing here logs plaintext, keys or ciphertext; errors never include them.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { kmsClient } from '../store/clients';

export type SecretValue = string | object;

/** A sealed set of secrets, as stored (a DynamoDB map of strings). */
export interface EncryptedBlob {
  /** Format version. */
  v: 1;
  /** What wrapped the data key: AWS KMS or the local master key file. */
  kp: 'kms' | 'local';
  /** The wrapped data key, base64 (a KMS ciphertext blob, or iv ‖ tag ‖ ciphertext under the master key). */
  dk: string;
  /** AES-GCM nonce of the payload, base64 (12 bytes). */
  iv: string;
  /** The encrypted JSON payload, base64. */
  ct: string;
  /** AES-GCM authentication tag of the payload, base64 (16 bytes). */
  tag: string;
}

/** A blob that cannot be opened: wrong workspace, tampered, wrong key, or not a blob at all. */
export class SecretDecryptionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SecretDecryptionError';
  }
}

const masterKeyFileEnv = 'GATEWAY_LOCAL_MASTER_KEY_FILE';
const kmsKeyIdEnv = 'GATEWAY_KMS_KEY_ID';

const payloadAad = (workspaceId: string) => Buffer.from(`llm-gateway/secrets/v1\0${workspaceId}`, 'utf8');
const wrapAad = (workspaceId: string) => Buffer.from(`llm-gateway/data-key/v1\0${workspaceId}`, 'utf8');

function isLocalMode(): boolean {
  return process.env.GATEWAY_MODE === 'local';
}

/** Seals `plaintext` (serialised as JSON) for `workspaceId` under a fresh data key. */
export async function encryptSecrets(plaintext: Record<string, SecretValue>, workspaceId: string): Promise<EncryptedBlob> {
  requireWorkspace(workspaceId);
  const { key, wrapped, provider } = await newDataKey(workspaceId);
  try {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(payloadAad(workspaceId));
    const ct = Buffer.concat([cipher.update(JSON.stringify(plaintext), 'utf8'), cipher.final()]);
    const blob: EncryptedBlob = {
      v: 1,
      kp: provider,
      dk: wrapped.toString('base64'),
      iv: iv.toString('base64'),
      ct: ct.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
    };
    // The writer often reads back soon (e.g. a route answering with what it stored): keep the key.
    rememberDataKey(provider, workspaceId, blob.dk, key);
    return blob;
  } finally {
    key.fill(0);
  }
}

/** Opens a blob sealed for `workspaceId`; throws SecretDecryptionError when that is not possible. */
export async function decryptSecrets<T extends Record<string, SecretValue> = Record<string, SecretValue>>(
  blob: EncryptedBlob,
  workspaceId: string,
): Promise<T> {
  requireWorkspace(workspaceId);
  if (!isBlob(blob)) throw new SecretDecryptionError('The stored secret blob is malformed.');
  const iv = Buffer.from(blob.iv, 'base64');
  const tag = Buffer.from(blob.tag, 'base64');
  if (iv.length !== 12 || tag.length !== 16) throw new SecretDecryptionError('The stored secret blob is malformed.');
  const key = await unwrapDataKey(blob, workspaceId);
  let json: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(payloadAad(workspaceId));
    decipher.setAuthTag(tag);
    json = Buffer.concat([decipher.update(Buffer.from(blob.ct, 'base64')), decipher.final()]).toString('utf8');
  } catch (error) {
    throw new SecretDecryptionError('The stored secrets could not be decrypted: the blob was altered or belongs to another workspace.', { cause: error });
  } finally {
    key.fill(0);
  }
  return JSON.parse(json) as T;
}

/** True when `value` has the shape of an EncryptedBlob. */
export function isBlob(value: unknown): value is EncryptedBlob {
  if (value === null || typeof value !== 'object') return false;
  const blob = value as Record<string, unknown>;
  return blob.v === 1 && (blob.kp === 'kms' || blob.kp === 'local') && ['dk', 'iv', 'ct', 'tag'].every((field) => typeof blob[field] === 'string');
}

function requireWorkspace(workspaceId: string): void {
  if (typeof workspaceId !== 'string' || workspaceId.length === 0) throw new Error('A workspace id is required to encrypt or decrypt secrets.');
}

// ---------------------------------------------------------------------------------------------
// Data keys

async function newDataKey(workspaceId: string): Promise<{ key: Buffer; wrapped: Buffer; provider: EncryptedBlob['kp'] }> {
  if (isLocalMode()) {
    const key = randomBytes(32);
    const master = await localMasterKey();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', master, iv);
    cipher.setAAD(wrapAad(workspaceId));
    const ct = Buffer.concat([cipher.update(key), cipher.final()]);
    return { key, wrapped: Buffer.concat([iv, cipher.getAuthTag(), ct]), provider: 'local' };
  }
  const keyId = process.env[kmsKeyIdEnv];
  if (!keyId) throw new Error(`${kmsKeyIdEnv} is not set; serverless.yml's provider.environment sets it to the stack's SecretsKey.`);
  const { GenerateDataKeyCommand } = await import('../store/kms');
  const result = await (await kmsClient()).send(
    new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: { workspace_id: workspaceId } }),
  );
  if (!result.Plaintext || !result.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key.');
  const key = Buffer.from(result.Plaintext);
  result.Plaintext.fill(0);
  return { key, wrapped: Buffer.from(result.CiphertextBlob), provider: 'kms' };
}

/** The blob's data key (a copy the caller may keep briefly; the cache keeps its own). */
async function unwrapDataKey(blob: EncryptedBlob, workspaceId: string): Promise<Buffer> {
  if (blob.kp === 'local' && !isLocalMode())
    throw new SecretDecryptionError('This secret was sealed with a local master key and cannot be opened outside local mode.');
  if (blob.kp === 'kms' && isLocalMode()) throw new SecretDecryptionError('This secret was sealed with AWS KMS and cannot be opened in local mode.');
  const cached = cachedDataKey(blob.kp, workspaceId, blob.dk);
  if (cached) return cached;
  const wrapped = Buffer.from(blob.dk, 'base64');
  let key: Buffer;
  if (blob.kp === 'local') {
    const master = await localMasterKey();
    if (wrapped.length !== 12 + 16 + 32) throw new SecretDecryptionError('The stored secret blob is malformed.');
    try {
      const decipher = createDecipheriv('aes-256-gcm', master, wrapped.subarray(0, 12));
      decipher.setAAD(wrapAad(workspaceId));
      decipher.setAuthTag(wrapped.subarray(12, 28));
      key = Buffer.concat([decipher.update(wrapped.subarray(28)), decipher.final()]);
    } catch (error) {
      throw new SecretDecryptionError('The stored secrets could not be decrypted: the data key does not belong to this workspace or the master key changed.', {
        cause: error,
      });
    }
  } else {
    try {
      const keyId = process.env[kmsKeyIdEnv];
      const { DecryptCommand } = await import('../store/kms');
      const result = await (await kmsClient()).send(
        new DecryptCommand({ CiphertextBlob: wrapped, EncryptionContext: { workspace_id: workspaceId }, ...(keyId ? { KeyId: keyId } : {}) }),
      );
      if (!result.Plaintext) throw new Error('KMS Decrypt returned no key.');
      key = Buffer.from(result.Plaintext);
      result.Plaintext.fill(0);
    } catch (error) {
      if ((error as Error).name === 'InvalidCiphertextException' || (error as Error).name === 'IncorrectKeyException') {
        throw new SecretDecryptionError('The stored secrets could not be decrypted: the data key does not belong to this workspace.', { cause: error });
      }
      throw error;
    }
  }
  if (key.length !== 32) throw new SecretDecryptionError('The stored secret blob is malformed.');
  rememberDataKey(blob.kp, workspaceId, blob.dk, key);
  return key;
}

// Unwrapped data keys, keyed by (wrapping, workspace, wrapped key). Short TTL and a size bound: a key
// removed from the store disappears from memory within minutes, and memory stays small.
const dataKeyTtlMs = 5 * 60_000;
const maxCachedDataKeys = 1_000;
const dataKeys = new Map<string, { key: Buffer; expiresAt: number }>();

function cachedDataKey(provider: string, workspaceId: string, wrapped: string): Buffer | undefined {
  const id = `${provider}\0${workspaceId}\0${wrapped}`;
  const entry = dataKeys.get(id);
  if (!entry) return undefined;
  if (entry.expiresAt <= Date.now()) {
    entry.key.fill(0);
    dataKeys.delete(id);
    return undefined;
  }
  return Buffer.from(entry.key);
}

function rememberDataKey(provider: string, workspaceId: string, wrapped: string, key: Buffer): void {
  const id = `${provider}\0${workspaceId}\0${wrapped}`;
  dataKeys.get(id)?.key.fill(0);
  dataKeys.delete(id);
  while (dataKeys.size >= maxCachedDataKeys) {
    const oldest = dataKeys.keys().next().value!;
    dataKeys.get(oldest)?.key.fill(0);
    dataKeys.delete(oldest);
  }
  dataKeys.set(id, { key: Buffer.from(key), expiresAt: Date.now() + dataKeyTtlMs });
}

/** Forgets every cached data key (tests; a long-running process never needs it). */
export function clearDataKeyCache(): void {
  for (const entry of dataKeys.values()) entry.key.fill(0);
  dataKeys.clear();
}

// ---------------------------------------------------------------------------------------------
// Local master key

let master: { file: string; key: Promise<Buffer> } | undefined;

function localMasterKey(): Promise<Buffer> {
  const file = process.env[masterKeyFileEnv];
  if (!file) {
    throw new Error(`${masterKeyFileEnv} is not set; in local mode the local runtime sets it to <data dir>/master.key.`);
  }
  if (master?.file !== file) {
    const key = loadOrCreateMasterKey(file);
    master = { file, key };
    key.catch(() => {
      if (master?.key === key) master = undefined;
    });
  }
  return master.key;
}

/**
 * Reads the master key file, or creates it with 32 random bytes and mode 0600. Creation is atomic
 * and never overwrites: the key goes to a private temporary file that is then hard-linked into
 * place, so concurrent first starts agree on one key and no reader sees a partial file.
 */
async function loadOrCreateMasterKey(file: string): Promise<Buffer> {
  const existing = await readMasterKey(file);
  if (existing) return existing;
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, randomBytes(32), { mode: 0o600, flag: 'wx' });
  try {
    await chmod(temporary, 0o600);
    await link(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary).catch(() => {});
  }
  const key = await readMasterKey(file);
  if (!key) throw new Error(`Could not create the local master key file ${file}.`);
  return key;
}

async function readMasterKey(file: string): Promise<Buffer | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (bytes.length !== 32) throw new Error(`The local master key file ${file} must hold exactly 32 bytes; it holds ${bytes.length}.`);
  return bytes;
}
