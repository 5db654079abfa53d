import type { createLocalJWKSet, JSONWebKeySet, JWTVerifyOptions } from 'jose';
import { isPlainObject } from '../../core/plain-object';
import { CheckParameterError } from '../check-types';
import { defineCheck } from '../define-check';
import { callForJson } from '../outbound-json';
import { optionalNumber, optionalString, stringList, urlParameter } from '../parameters';

/**
 * Verifies a JWT carried in a request header against the keys of a JWKS URL. The key set is fetched
 * through the guarded outbound client (never jose's own fetch) and kept for `cacheMaxAge` seconds; a
 * token signed by a key the cached set lacks fetches it again (at most every 30 s), so a rotation is
 * picked up at once.
 */

const refetchAfterMs = 30_000;
const fetchTimeoutMs = 5_000;
const maxCachedKeySets = 100;

interface CachedKeySet {
  resolve: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
  expiresAt: number;
}

const keySets = new Map<string, CachedKeySet>();
const inFlight = new Map<string, Promise<CachedKeySet>>();

// The verifier loads with the first token a check verifies: most functions never run this check.
let jose: Promise<typeof import('./jose-verify')> | undefined;
const loadJose = () => (jose ??= import('./jose-verify'));

/** Forgets every cached key set (tests; an operator who rotated keys in a hurry restarts instead). */
export function clearJwksCache(): void {
  keySets.clear();
}

function fetchKeySet(url: URL, maxAgeSeconds: number, signal: AbortSignal | undefined): Promise<CachedKeySet> {
  const key = url.href;
  const pending = inFlight.get(key);
  if (pending) return pending;
  const request = (async () => {
    const what = `The JWKS endpoint at ${url.host}`;
    const body = await callForJson({ what, url, method: 'GET', timeoutMs: fetchTimeoutMs, signal });
    if (!isPlainObject(body) || !Array.isArray(body.keys)) throw new Error(`${what} answered without a \`keys\` list.`);
    const { createLocalJWKSet } = await loadJose();
    const now = Date.now();
    const entry = { resolve: createLocalJWKSet(body as unknown as JSONWebKeySet), fetchedAt: now, expiresAt: now + maxAgeSeconds * 1000 };
    if (keySets.size >= maxCachedKeySets && !keySets.has(key)) keySets.delete(keySets.keys().next().value!);
    keySets.set(key, entry);
    return entry;
  })();
  inFlight.set(key, request);
  request.then(
    () => inFlight.delete(key),
    () => inFlight.delete(key),
  );
  return request;
}

async function keySetFor(url: URL, maxAgeSeconds: number, signal: AbortSignal | undefined): Promise<CachedKeySet> {
  const cached = keySets.get(url.href);
  if (cached && cached.expiresAt > Date.now()) return cached;
  return fetchKeySet(url, maxAgeSeconds, signal);
}

/** The longest `maxTokenAge`, in seconds: a year ("1y", as long as a leap year) and no more. */
export const maxTokenAgeLimit = 31_622_400;

const secondsPerUnit: [RegExp, number][] = [
  [/^(s|sec|secs|second|seconds)$/, 1],
  [/^(m|min|mins|minute|minutes)$/, 60],
  [/^(h|hr|hrs|hour|hours)$/, 3_600],
  [/^(d|day|days)$/, 86_400],
  [/^(w|week|weeks)$/, 604_800],
  [/^(y|yr|yrs|year|years)$/, 31_557_600],
];

/** Seconds; a duration text is read here (not left to the verifier) so its range is checked when the check is saved. */
function maxTokenAgeParameter(params: Record<string, unknown>): number {
  const value = params.maxTokenAge;
  if (value === undefined || value === null) return 86_400;
  let seconds: number | undefined;
  if (typeof value === 'number' && Number.isFinite(value)) seconds = value;
  const text = typeof value === 'string' ? /^(\d{1,12}(?:\.\d{1,6})?)\s*([a-z]{1,7})$/i.exec(value.trim()) : null;
  if (text) {
    const unit = secondsPerUnit.find(([names]) => names.test(text[2].toLowerCase()));
    if (unit) seconds = Number(text[1]) * unit[1];
  }
  if (seconds === undefined)
    throw new CheckParameterError('maxTokenAge', '`maxTokenAge` must be a number of seconds or a duration such as "30m", "12h" or "1d".');
  if (seconds <= 0 || seconds > maxTokenAgeLimit) {
    throw new CheckParameterError(
      'maxTokenAge',
      `\`maxTokenAge\` must be more than 0 and at most ${maxTokenAgeLimit} seconds (366 days); got ${JSON.stringify(value)}.`,
    );
  }
  return seconds;
}

const bearer = /^bearer\s+/i;

export const jwt = defineCheck({
  id: 'default.jwt',
  sides: ['request'],
  invertible: false,
  // A key set that cannot be fetched must not let unverified callers through unless the operator says so.
  failOnErrorByDefault: true,
  parameters: ['jwksUri', 'headerKey', 'cacheMaxAge', 'clockTolerance', 'maxTokenAge', 'algorithms', 'issuer', 'audience'],
  parse(params) {
    const algorithms = stringList(params, 'algorithms');
    if (algorithms.some((name) => name.toLowerCase() === 'none'))
      throw new CheckParameterError('algorithms', '`algorithms` may not include "none": an unsigned token proves nothing.');
    const issuer = optionalString(params, 'issuer', '');
    const audience = stringList(params, 'audience');
    const options: JWTVerifyOptions = {
      clockTolerance: optionalNumber(params, 'clockTolerance', 5, { min: 0, max: 3_600 }),
      maxTokenAge: maxTokenAgeParameter(params),
      ...(algorithms.length > 0 ? { algorithms } : {}),
      ...(issuer ? { issuer } : {}),
      ...(audience.length > 0 ? { audience } : {}),
    };
    return {
      url: urlParameter(params, 'jwksUri'),
      header: optionalString(params, 'headerKey', 'authorization', { maxLength: 200 }).toLowerCase(),
      cacheMaxAge: optionalNumber(params, 'cacheMaxAge', 600, { min: 0, max: 86_400 }),
      options,
    };
  },
  async run({ url, header, cacheMaxAge, options }, input) {
    const value = input.headers[header];
    if (!value) return { verdict: false, data: { explanation: `The request has no ${header} header.` } };
    const token = value.replace(bearer, '').trim();
    const { errors: joseErrors, jwtVerify } = await loadJose();
    let keySet = await keySetFor(url, cacheMaxAge, input.signal);
    for (let attempt = 0; ; attempt++) {
      try {
        const { payload, protectedHeader } = await jwtVerify(token, keySet.resolve, options);
        return {
          verdict: true,
          data: { explanation: 'The token is valid.', subject: payload.sub, issuer: payload.iss, algorithm: protectedHeader.alg, keyId: protectedHeader.kid },
        };
      } catch (error) {
        const unknownKey = error instanceof joseErrors.JWKSNoMatchingKey;
        if (unknownKey && attempt === 0 && Date.now() - keySet.fetchedAt >= refetchAfterMs) {
          keySet = await fetchKeySet(url, cacheMaxAge, input.signal);
          continue;
        }
        const code = (error as { code?: string }).code;
        if (!code?.startsWith('ERR_J')) throw error;
        return { verdict: false, data: { explanation: `The token is not valid: ${(error as Error).message}`, code } };
      }
    }
  },
});
