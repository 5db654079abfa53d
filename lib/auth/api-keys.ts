import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from '../core/sha256';
import { newId } from '../core/ids';
import { getApiKeyItem, listApiKeyItems, putApiKeyItem, revokeApiKeyItem, type ApiKeyRecord, type Role } from '../store/api-keys';
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

function hintOf(secret: string): string {
  return `${secret.slice(0, 8)}…${secret.slice(-4)}`;
}

/**
 * Stores a key. With `onlyIfAbsent`, an existing key with the same secret is left as it is
 * (used to install a known admin key idempotently).
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

/** Marks a key revoked. Returns undefined when the workspace has no key with that id. */
export function revokeApiKey(workspaceId: string, keyId: string): Promise<ApiKeyRecord | undefined> {
  return revokeApiKeyItem(workspaceId, keyId, Math.floor(Date.now() / 1000));
}
