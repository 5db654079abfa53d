import { GatewayError } from '../core/errors';
import { sha256Hex } from '../core/sha256';
import { findJwtProvidersByIssuer, type JwtProviderItem } from '../store/jwt-providers';
import { LoadingCache } from '../store/loading-cache';
import type { Role } from './api-keys';
import { KeySetCache } from './jwks';
import { audiencesOf, checkAlgorithm, checkSignature, checkTimes, claimAt, claimList, decodeJwt, JwtError, selectKey } from './jwt-verify';
import { findWorkspace, workspaceIdPattern } from './workspaces';

/**
 * Authentication by a JWT of a registered identity provider. The token's `iss` (and `aud`) find
 * the provider, the provider's key set verifies the signature, and then the times are checked;
 * the workspace is the provider's own or the one a claim names, the scopes and the role come from
 * the claims the provider names.
 */

/** What a token grants on top of (or instead of) a role. */
export type TokenScope = 'read' | 'list' | 'completions';

/** The token behind an AuthContext authenticated by a JWT. */
export interface TokenIdentity {
  providerId: string;
  /** The `sub` claim, when the token has one. */
  subject?: string;
  /** Scopes the token carries (all of them, known to the gateway or not). */
  scopes: readonly string[];
  /** Whether the role came from the token's roles claim; a token without one acts by its scopes alone. */
  roleGranted: boolean;
  /** The claims the provider's `log_claims` names, as the token has them. */
  logClaims?: Record<string, unknown>;
}

export interface TokenAuth {
  keyId: string;
  role: Role;
  organisationId: string;
  workspaceId: string;
  token: TokenIdentity;
}

const providerTtlMs = 5_000;
const unknownIssuerTtlMs = 2_000;
const workspaceTtlMs = 5_000;

/** Providers by issuer: a registered or changed provider is seen within 5 s, a new issuer within 2 s. */
const providersByIssuer = new LoadingCache<JwtProviderItem[]>({ maxEntries: 1_000, maxMissingEntries: 1_000, missingTtlMs: unknownIssuerTtlMs });
/** Workspaces a claim named, by organisation and id: present while active. */
const activeWorkspaces = new LoadingCache<true>({ maxEntries: 10_000, maxMissingEntries: 1_000, missingTtlMs: unknownIssuerTtlMs });

export const keySets = new KeySetCache();

/** Forgets cached providers, workspaces and key sets (tests). */
export function clearTokenCaches(): void {
  providersByIssuer.clear();
  activeWorkspaces.clear();
  keySets.clear();
}

const refused = (error: JwtError) => new GatewayError(401, error.message, { code: error.code, type: 'authentication_error' });
const refuse = (code: JwtError['code'], message: string) => refused(new JwtError(code, message));
const quoted = (value: string) => JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);

/** The providers registered for an issuer (none for an unknown one). */
export async function providersForIssuer(issuer: string): Promise<JwtProviderItem[]> {
  // Keyed by the issuer's digest: entries keep one small size whatever a token's `iss` holds.
  return (
    (await providersByIssuer.get(sha256Hex(issuer), providerTtlMs, async () => {
      const found = await findJwtProvidersByIssuer(issuer);
      return found.length > 0 ? found : undefined;
    })) ?? []
  );
}

/** Checks a JWT and answers who is calling; a 401 with a `jwt_*` code says what is wrong with it. */
export async function authenticateToken(token: string, nowSeconds = Date.now() / 1000): Promise<TokenAuth> {
  try {
    const decoded = decodeJwt(token);
    checkAlgorithm(decoded.header.alg);
    const issuer = decoded.payload.iss;
    if (typeof issuer !== 'string' || issuer === '') throw new JwtError('jwt_malformed', 'The token has no "iss" (issuer) claim.');
    const providers = await providersForIssuer(issuer);
    if (providers.length === 0)
      throw new JwtError(
        'jwt_wrong_issuer',
        `The token's issuer ${quoted(issuer)} is not a registered identity provider (POST /v1/auth/jwt-providers registers one).`,
      );
    const audiences = audiencesOf(decoded.payload);
    const provider = providers.find((candidate) => audiences.includes(candidate.audience));
    if (!provider) {
      throw new JwtError(
        'jwt_wrong_audience',
        audiences.length === 0
          ? `The token has no "aud" (audience) claim; its issuer ${quoted(issuer)} is registered for a given audience.`
          : `The token's audience ${audiences.map(quoted).join(', ')} is not one registered for its issuer ${quoted(issuer)}.`,
      );
    }
    let key: Awaited<ReturnType<KeySetCache['keyFor']>>;
    try {
      key = await keySets.keyFor(provider.id, provider.jwks_uri, (keys) => selectKey(keys, decoded.header));
    } catch (error) {
      if (error instanceof JwtError) throw error;
      throw new GatewayError(502, `The identity provider's key set could not be fetched: ${(error as Error).message}`, { code: 'jwks_unavailable' });
    }
    if (!key) {
      throw new JwtError(
        'jwt_unknown_kid',
        decoded.header.kid === undefined
          ? `The token names no "kid", and its issuer's key set does not have exactly one ${decoded.header.alg} key.`
          : `The token's key id (kid) ${quoted(decoded.header.kid)} is not in its issuer's key set for ${decoded.header.alg}.`,
      );
    }
    checkSignature(decoded, key);
    checkTimes(decoded.payload, nowSeconds, provider.clock_tolerance_s);
    return {
      keyId: provider.id,
      role: roleOf(decoded.payload, provider) ?? 'member',
      organisationId: provider.organisation_id,
      workspaceId: await workspaceOf(decoded.payload, provider),
      token: identityOf(decoded.payload, provider),
    };
  } catch (error) {
    throw error instanceof JwtError ? refused(error) : error;
  }
}

function identityOf(payload: Record<string, unknown>, provider: JwtProviderItem): TokenIdentity {
  const identity: TokenIdentity = {
    providerId: provider.id,
    scopes: claimList(payload, provider.scopes_claim),
    roleGranted: roleOf(payload, provider) !== undefined,
  };
  if (typeof payload.sub === 'string') identity.subject = payload.sub.slice(0, 256);
  const logged: Record<string, unknown> = {};
  for (const claim of provider.log_claims) {
    const value = claimAt(payload, claim);
    if (value !== undefined) logged[claim] = typeof value === 'string' ? value.slice(0, 256) : value;
  }
  if (Object.keys(logged).length > 0 && JSON.stringify(logged).length <= 2_048) identity.logClaims = logged;
  return identity;
}

/** `admin` when the roles claim holds it, else `member` when it holds that; owners are never made by a token. */
function roleOf(payload: Record<string, unknown>, provider: JwtProviderItem): Role | undefined {
  const roles = claimList(payload, provider.roles_claim);
  if (roles.includes('admin')) return 'admin';
  if (roles.includes('member')) return 'member';
  return undefined;
}

async function workspaceOf(payload: Record<string, unknown>, provider: JwtProviderItem): Promise<string> {
  const claim = provider.workspace_claim ?? 'workspace_id';
  const value = provider.workspace_id ?? claimAt(payload, claim);
  if (typeof value !== 'string' || !workspaceIdPattern.test(value)) {
    throw refuse(
      'jwt_malformed',
      `The token's "${claim}" claim must name a workspace of the organisation (ws_…); its identity provider takes the workspace from it.`,
    );
  }
  const key = `${provider.organisation_id}|${value}`;
  const active = await activeWorkspaces.get(key, workspaceTtlMs, async () => {
    const found = await findWorkspace(provider.organisation_id, value);
    return found && found.status === 'active' ? true : undefined;
  });
  if (!active) {
    const named = provider.workspace_id ? `Its identity provider acts in ${value}` : `The token's "${claim}" claim names ${quoted(value)}`;
    throw new GatewayError(401, `${named}, which is not an active workspace of the organisation.`, {
      code: 'jwt_unknown_workspace',
      type: 'authentication_error',
    });
  }
  return value;
}
