import { GatewayError, unauthorized } from '../core/errors';
import { LoadingCache } from '../store/loading-cache';
import { isWorkspaceActive } from './workspaces';
import { findApiKeyByHash, hashApiKey, maxApiKeyLength, type ApiKeyRecord, type Role } from './api-keys';
import { authenticateToken, type TokenIdentity } from './jwt-auth';
import { looksLikeJwt } from './jwt-verify';

/**
 * Who is calling: the gateway key's identity, or a JWT's (then `keyId` is its identity provider's
 * id and `token` says what the token grants).
 */
export interface AuthContext {
  keyId: string;
  role: Role;
  organisationId: string;
  workspaceId: string;
  token?: TokenIdentity & {
    /** Where the token came from: `authorization` means the header was the gateway's, not a provider key. */
    via: 'x-gateway-api-key' | 'authorization';
  };
}

/** Three base64url parts, the first starting as `{"` does in base64url: no gateway key looks like this. */
const jwsShape = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

// Short TTLs: a revoked key stops working within a few seconds on every warm container.
const validKeyTtlMs = 5_000;
const unknownKeyTtlMs = 2_000;

/**
 * Keyed by the SHA-256 of the presented key, so every entry has the same small size (~140 bytes)
 * whatever a caller sends. Unknown keys have a pool of their own, 1,000 entries (~140 KB) per
 * bundle, so junk keys never push out valid ones; valid keys are only as many as were created.
 */
const cache = new LoadingCache<AuthContext>({ maxEntries: 10_000, maxMissingEntries: 1_000, missingTtlMs: unknownKeyTtlMs });

/**
 * Checks `x-gateway-api-key` (or a JWT, see below) and returns the caller's identity; 401 when
 * missing, unknown or revoked, or a `jwt_*` 401 for a token that does not pass.
 */
export async function authenticate(headers: Record<string, string>): Promise<AuthContext> {
  const secret = headers['x-gateway-api-key'];
  const bearer = secret ? undefined : /^bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1];
  // A JWT in x-gateway-api-key (anything shaped as a compact JWS with a JSON header, so a broken
  // one is a jwt_malformed rather than an unknown key), or a well-formed one in Authorization when
  // there is no x-gateway-api-key (docs/jwt.md).
  if (secret && jwsShape.test(secret)) return viaToken(secret, 'x-gateway-api-key');
  if (bearer && looksLikeJwt(bearer)) return viaToken(bearer, 'authorization');
  if (!secret) {
    throw unauthorized('Missing x-gateway-api-key header. Every request needs a gateway API key; an admin creates one with POST /v1/api-keys.');
  }
  if (secret.length > maxApiKeyLength) {
    throw unauthorized(
      `Invalid x-gateway-api-key: it is ${secret.length} characters long, and gateway API keys have at most ${maxApiKeyLength} (generated keys are gwk_ followed by 43 characters). Send the key alone.`,
    );
  }
  const hash = hashApiKey(secret);
  const auth = await cache.get(hash, validKeyTtlMs, () => lookup(hash));
  if (!auth) throw unauthorized('Invalid x-gateway-api-key: the key is unknown or has been revoked (or its workspace archived).');
  return auth;
}

async function viaToken(token: string, via: 'x-gateway-api-key' | 'authorization'): Promise<AuthContext> {
  const { token: identity, ...caller } = await authenticateToken(token);
  return { ...caller, token: { ...identity, via } };
}

/** What the key cache holds (tests). */
export function apiKeyCacheSizes() {
  return cache.sizes();
}

async function lookup(hash: string): Promise<AuthContext | undefined> {
  const found = await findApiKeyByHash(hash);
  if (!found || found.record.revoked_at !== undefined) return undefined;
  if (!(await isWorkspaceActive(found.record.workspace_id))) return undefined;
  return toAuthContext(found.record);
}

function toAuthContext(record: ApiKeyRecord): AuthContext {
  return { keyId: record.id, role: record.role, organisationId: record.organisation_id, workspaceId: record.workspace_id };
}

/** 403 unless the caller's key has the admin role (owners are admins of their workspace too). */
export function requireAdmin(auth: AuthContext): void {
  if (auth.role !== 'admin' && auth.role !== 'owner') {
    throw new GatewayError(403, 'This route needs an admin gateway API key; the key used has the member role.', { code: 'admin_required' });
  }
}

/** 403 unless the caller's key is an owner: organisation-wide changes (workspaces, owner keys, keys of other workspaces). */
export function requireOwner(auth: AuthContext, action: string): void {
  if (auth.role !== 'owner') {
    throw new GatewayError(403, `Only an owner key may ${action}; the key used has the ${auth.role} role.`, { code: 'owner_required' });
  }
}
