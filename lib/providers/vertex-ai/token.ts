import { createHash } from 'node:crypto';
import { GatewayError } from '../../core/errors';
import { readBody } from '../../core/read-body';
import { sendOutbound } from '../../outbound/http-client';
import { readServiceAccount, signAssertion, type ServiceAccount } from './service-account';

/** Google tokens live an hour; one is replaced this long before it runs out (at most half its life). */
const refreshMarginMs = 5 * 60_000;
/** Service accounts whose tokens are kept; the least recently used one is dropped beyond this. */
const maxCachedAccounts = 100;
const exchangeTimeoutMs = 15_000;
const maxTokenResponseBytes = 64 * 1024;
const jwtBearerGrant = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

interface CachedToken {
  /** Shared by every request that needs the token while the exchange is under way. */
  token: Promise<string>;
  /** Set once the exchange has succeeded. */
  refreshAt?: number;
}

const cache = new Map<string, CachedToken>();

/** Forgets every cached token (tests). */
export function clearTokenCache(): void {
  cache.clear();
}

/** One cache entry per key: the account, its key id and key, and where its tokens come from. */
function cacheKey(json: Record<string, unknown>): string {
  const hash = createHash('sha256');
  for (const field of ['client_email', 'private_key_id', 'token_uri', 'private_key']) hash.update(`${String(json[field] ?? '')}\0`);
  return hash.digest('base64url');
}

/**
 * An OAuth access token for a service account key (`cloudB_service_account_json`), from the cache
 * while it has more than a few minutes to live. Requests that miss at the same time share one
 * exchange; a failed exchange is not cached.
 */
export function serviceAccountToken(json: Record<string, unknown>, provider: string): Promise<string> {
  const key = cacheKey(json);
  const cached = cache.get(key);
  if (cached && (cached.refreshAt === undefined || Date.now() < cached.refreshAt)) {
    // Most recently used last, so eviction drops the least recently used.
    cache.delete(key);
    cache.set(key, cached);
    return cached.token;
  }
  const account = readServiceAccount(json);
  const token = exchange(account, provider).then(
    (issued) => {
      entry.refreshAt = Date.now() + issued.lifetimeMs - Math.min(refreshMarginMs, issued.lifetimeMs / 2);
      return issued.token;
    },
    (error: unknown) => {
      if (cache.get(key) === entry) cache.delete(key);
      throw error;
    },
  );
  const entry: CachedToken = { token };
  cache.delete(key);
  cache.set(key, entry);
  if (cache.size > maxCachedAccounts) cache.delete(cache.keys().next().value!);
  return entry.token;
}

/**
 * The JWT-bearer exchange at the key's `token_uri`, through the gateway's outbound client, so the
 * address guard applies: a `token_uri` on a private address is refused like a custom host.
 * @see https://developers.google.com/identity/protocols/oauth2/service-account#httprest
 */
async function exchange(account: ServiceAccount, provider: string): Promise<{ token: string; lifetimeMs: number }> {
  const url = new URL(account.tokenUri);
  const body = `grant_type=${encodeURIComponent(jwtBearerGrant)}&assertion=${signAssertion(account, Math.floor(Date.now() / 1000))}`;
  let bytes: Buffer;
  let status: number;
  try {
    const response = await sendOutbound({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
      signal: AbortSignal.timeout(exchangeTimeoutMs),
      target: `${provider} token endpoint`,
    });
    status = response.status;
    bytes = await readBody(response.body, maxTokenResponseBytes, `The ${provider} token endpoint response`);
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'custom_host_not_allowed') {
      throw new GatewayError(400, `The service account's token_uri is not allowed: ${error.message}`, {
        code: 'token_uri_not_allowed',
        param: 'cloudB_service_account_json.token_uri',
        provider,
      });
    }
    if (error instanceof GatewayError) throw error;
    throw new GatewayError(502, `Could not get an access token for ${account.clientEmail} from ${url.host}: ${(error as Error).message}.`, {
      code: 'service_account_token_error',
      provider,
    });
  }
  let parsed: { access_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown } = {};
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    // reported below
  }
  if (status >= 400 || typeof parsed.access_token !== 'string') {
    const reason = [parsed.error, parsed.error_description].filter((part) => typeof part === 'string').join(': ') || `status ${status}`;
    // The token endpoint turning the key down is an authentication failure; anything else is upstream trouble.
    const rejected = status >= 400 && status < 500;
    throw new GatewayError(rejected ? 401 : 502, `${url.host} would not issue an access token for ${account.clientEmail}: ${reason}.`, {
      code: 'service_account_token_error',
      provider,
    });
  }
  const expiresIn = typeof parsed.expires_in === 'number' && parsed.expires_in > 0 ? parsed.expires_in : 3600;
  return { token: parsed.access_token, lifetimeMs: expiresIn * 1000 };
}
