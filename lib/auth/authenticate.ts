import { GatewayError, unauthorized } from '../http/errors';
import { findApiKeyByHash, hashApiKey, type ApiKeyRecord, type Role } from './api-keys';

/** Who is calling: the gateway key's identity. */
export interface AuthContext {
  keyId: string;
  role: Role;
  organisationId: string;
  workspaceId: string;
}

// Short TTLs: a revoked key stops working within a few seconds on every warm container.
const validKeyTtlMs = 5_000;
const unknownKeyTtlMs = 2_000;
const maxCachedKeys = 10_000;

interface CacheEntry {
  auth: AuthContext | undefined;
  expiresAt: number;
}

const cache = new Map<string, CacheEntry>();

/** Checks `x-gateway-api-key` and returns the caller's identity; 401 when missing, unknown or revoked. */
export async function authenticate(headers: Record<string, string>): Promise<AuthContext> {
  const secret = headers['x-gateway-api-key'];
  if (!secret) {
    throw unauthorized('Missing x-gateway-api-key header. Every request needs a gateway API key; an admin creates one with POST /v1/api-keys.');
  }
  const now = Date.now();
  // Keyed by the presented key itself, so a warm request skips hashing too.
  let entry = cache.get(secret);
  if (!entry || entry.expiresAt <= now) {
    const found = await lookup(hashApiKey(secret));
    entry = { auth: found, expiresAt: now + (found ? validKeyTtlMs : unknownKeyTtlMs) };
    if (cache.size >= maxCachedKeys) cache.delete(cache.keys().next().value!);
    cache.set(secret, entry);
  }
  if (!entry.auth) throw unauthorized('Invalid x-gateway-api-key: the key is unknown or has been revoked.');
  return entry.auth;
}

async function lookup(hash: string): Promise<AuthContext | undefined> {
  const found = await findApiKeyByHash(hash);
  if (!found || found.record.revoked_at !== undefined) return undefined;
  return toAuthContext(found.record);
}

function toAuthContext(record: ApiKeyRecord): AuthContext {
  return { keyId: record.id, role: record.role, organisationId: record.organisation_id, workspaceId: record.workspace_id };
}

/** 403 unless the caller's key has the admin role. */
export function requireAdmin(auth: AuthContext): void {
  if (auth.role !== 'admin') {
    throw new GatewayError(403, 'This route needs an admin gateway API key; the key used has the member role.', { code: 'admin_required' });
  }
}
