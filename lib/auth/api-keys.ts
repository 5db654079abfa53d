import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../core/sha256';
import { newId } from '../core/ids';
import { getApiKeyItem, listApiKeyItems, putApiKeyItem, type ApiKeyRecord, type Role } from '../store/api-keys';
import { countOwnerKey } from '../store/organisation';
import type { Page } from '../store/newest-first';

export type { ApiKeyRecord, Role };

const keyPrefix = 'gwk_';

/**
 * The longest key the gateway accepts. Generated keys are `gwk_` and 43 characters (47 in all);
 * `GATEWAY_ADMIN_KEY` is the operator's choice, so the limit leaves it room. Anything longer can
 * never be a key, and is refused before it is hashed or looked up.
 */
export const maxApiKeyLength = 256;

export function hashApiKey(secret: string): string {
  return sha256Hex(secret);
}

export function generateApiKeySecret(): string {
  return keyPrefix + randomBytes(32).toString('base64url');
}

const generatedKeyPattern = /^gwk_[A-Za-z0-9_-]{43}$/;

/**
 * The last 4 characters, and nothing else of the secret: enough to tell keys apart. A generated key
 * also shows its `gwk_` prefix, which every generated key has and so tells nothing; an
 * operator-chosen `GATEWAY_ADMIN_KEY` shows no prefix, since its first characters are part of the secret.
 */
export function hintOf(secret: string): string {
  return `${generatedKeyPattern.test(secret) ? keyPrefix : ''}…${secret.slice(-4)}`;
}

/**
 * Stores a key. With `onlyIfAbsent`, an existing key with the same secret is left as it is
 * (used to install a known admin key idempotently). A new owner key joins its organisation's count
 * of owner keys once it is stored, so a crash in between leaves it uncounted, never counted twice.
 */
export async function putApiKey(
  secret: string,
  fields: { name: string; role: Role; organisation_id: string; workspace_id: string },
  options: { onlyIfAbsent?: boolean } = {},
): Promise<ApiKeyRecord> {
  const hash = hashApiKey(secret);
  const record: ApiKeyRecord = { id: newId('key'), hint: hintOf(secret), created_at: Math.floor(Date.now() / 1000), ...fields };
  if (!(await putApiKeyItem(hash, record, options))) {
    const existing = await findApiKeyByHash(hash);
    if (existing) return existing.record;
    throw new Error('An API key with this secret exists but could not be read back.');
  }
  if (record.role === 'owner') await countOwnerKey(record.organisation_id, record.id);
  return record;
}

/** Looks a key up by the SHA-256 of its secret. */
export async function findApiKeyByHash(hash: string): Promise<{ record: ApiKeyRecord; hash: string } | undefined> {
  const found = await getApiKeyItem(hash);
  if (!found) return undefined;
  // The lookup is by hash already; the comparison in constant time keeps it that way if the key design changes.
  const stored = Buffer.from(found.storedHash, 'hex');
  const given = Buffer.from(hash, 'hex');
  if (stored.length !== given.length || !timingSafeEqual(stored, given)) return undefined;
  return { record: found.record, hash };
}

export type KeyPage = Page<ApiKeyRecord>;

/** Keys of a workspace, newest first. */
export function listApiKeys(workspaceId: string, options: { limit: number; after?: string }): Promise<KeyPage> {
  return listApiKeyItems(workspaceId, options);
}
