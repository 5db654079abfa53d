import { createPublicKey, verify, type JsonWebKey, type KeyObject } from 'node:crypto';

/**
 * JSON Web Tokens signed with an asymmetric key (RFC 7515 compact serialisation, RFC 7519 claims),
 * checked with node:crypto alone. Only the algorithms below are accepted: `none` and the HMAC family
 * (`HS*`) never are, since a gateway that holds only an identity provider's public keys has no
 * shared secret, and an `HS256` token "signed" with a public key must not pass.
 */

export type JwtErrorCode =
  | 'jwt_malformed'
  | 'jwt_algorithm_refused'
  | 'jwt_wrong_issuer'
  | 'jwt_wrong_audience'
  | 'jwt_unknown_kid'
  | 'jwt_bad_signature'
  | 'jwt_expired'
  | 'jwt_not_yet_valid';

/** Why a token was refused; the message is safe to show its bearer. */
export class JwtError extends Error {
  constructor(
    readonly code: JwtErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'JwtError';
  }
}

interface Algorithm {
  hash: 'sha256' | 'sha384' | 'sha512';
  kty: 'RSA' | 'EC';
  /** EC curve, and the length of the raw `r || s` signature JWS uses (RFC 7518 §3.4). */
  curve?: { crv: string; signatureBytes: number };
}

export const algorithms: Record<string, Algorithm> = {
  RS256: { hash: 'sha256', kty: 'RSA' },
  RS384: { hash: 'sha384', kty: 'RSA' },
  RS512: { hash: 'sha512', kty: 'RSA' },
  ES256: { hash: 'sha256', kty: 'EC', curve: { crv: 'P-256', signatureBytes: 64 } },
  ES384: { hash: 'sha384', kty: 'EC', curve: { crv: 'P-384', signatureBytes: 96 } },
};

/** Tokens longer than this are refused unread (API Gateway's headers hold 10 KB in all). */
export const maxTokenLength = 8_192;

/** RSA keys shorter than this are refused (RFC 7518 §3.3 asks for 2048 bits at least). */
const minRsaBits = 2048;

export interface JwtHeader {
  alg: string;
  kid?: string;
  typ?: string;
  [name: string]: unknown;
}

export interface DecodedJwt {
  header: JwtHeader;
  payload: Record<string, unknown>;
  /** `<header>.<payload>` as sent: the bytes the signature covers. */
  signingInput: string;
  signature: Buffer;
}

const base64url = /^[A-Za-z0-9_-]*$/;
const compactShape = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Whether a string has a JWT's shape (three base64url parts, the first a JSON header with `alg`), without checking anything else. */
export function looksLikeJwt(text: string): boolean {
  if (text.length > maxTokenLength || !compactShape.test(text)) return false;
  try {
    decodeJwt(text);
    return true;
  } catch {
    return false;
  }
}

function jsonPart(part: string, what: string): Record<string, unknown> {
  if (!base64url.test(part)) throw new JwtError('jwt_malformed', `The token's ${what} is not base64url.`);
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    throw new JwtError('jwt_malformed', `The token's ${what} is not base64url-encoded JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new JwtError('jwt_malformed', `The token's ${what} is not a JSON object.`);
  return value as Record<string, unknown>;
}

/** Splits and parses a compact JWS; nothing is verified yet. */
export function decodeJwt(token: string): DecodedJwt {
  if (token.length > maxTokenLength) throw new JwtError('jwt_malformed', `The token is ${token.length} characters long; at most ${maxTokenLength} are read.`);
  const parts = token.split('.');
  if (parts.length !== 3) {
    throw new JwtError(
      'jwt_malformed',
      `A JWT has three base64url parts separated by dots (header.payload.signature); this one has ${parts.length}${parts.length === 5 ? ' (an encrypted JWE, which is not accepted)' : ''}.`,
    );
  }
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  const header = jsonPart(headerPart, 'header');
  if (typeof header.alg !== 'string' || header.alg === '') throw new JwtError('jwt_malformed', 'The token\'s header has no "alg".');
  if (header.kid !== undefined && typeof header.kid !== 'string') throw new JwtError('jwt_malformed', 'The token\'s header "kid" is not a string.');
  if (Array.isArray(header.crit) && header.crit.length > 0)
    throw new JwtError('jwt_malformed', `The token's header marks extensions as critical (${header.crit.join(', ')}); none are understood.`);
  const payload = jsonPart(payloadPart, 'payload');
  if (!base64url.test(signaturePart)) throw new JwtError('jwt_malformed', "The token's signature is not base64url.");
  return { header: header as JwtHeader, payload, signingInput: `${headerPart}.${payloadPart}`, signature: Buffer.from(signaturePart, 'base64url') };
}

/** Refuses an algorithm the gateway does not verify: `none`, `HS*` and anything unlisted. */
export function checkAlgorithm(alg: string): Algorithm {
  const algorithm = Object.hasOwn(algorithms, alg) ? algorithms[alg] : undefined;
  if (algorithm) return algorithm;
  const why =
    alg.toLowerCase() === 'none'
      ? 'an unsigned token proves nothing'
      : /^HS/i.test(alg)
        ? 'HMAC tokens need a shared secret, and identity providers are trusted by their public keys only'
        : 'it is not supported';
  throw new JwtError(
    'jwt_algorithm_refused',
    `The token is signed with "${alg.slice(0, 20)}", which is refused: ${why}. Accepted: ${Object.keys(algorithms).join(', ')}.`,
  );
}

/** A public key of a key set, ready to verify with. */
export interface VerificationKey {
  kid?: string;
  alg?: string;
  kty: string;
  crv?: string;
  use?: string;
  key: KeyObject;
}

/** The usable signing keys of a JWKS document (RFC 7517); keys that are not public signing keys, or cannot be read, are skipped. */
export function readKeySet(document: unknown): VerificationKey[] {
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error('The JWKS document has no "keys" list.');
  const usable: VerificationKey[] = [];
  for (const jwk of keys as JsonWebKey[]) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    if (jwk.kty !== 'RSA' && jwk.kty !== 'EC') continue;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    if (jwk.d !== undefined) continue; // a private key has no place in a published set
    try {
      const key = createPublicKey({ key: jwk, format: 'jwk' });
      if (jwk.kty === 'RSA' && (key.asymmetricKeyDetails?.modulusLength ?? 0) < minRsaBits) continue;
      usable.push({
        kid: typeof jwk.kid === 'string' ? jwk.kid : undefined,
        alg: typeof jwk.alg === 'string' ? jwk.alg : undefined,
        kty: jwk.kty,
        crv: typeof jwk.crv === 'string' ? jwk.crv : undefined,
        key,
      });
    } catch {
      // An unreadable key is one the set cannot be trusted for; the others still are.
    }
  }
  return usable;
}

/**
 * The key a token names: by `kid`, among the keys that fit its algorithm; a token without a `kid`
 * takes the only key that fits, if there is exactly one. Undefined when none is found.
 */
export function selectKey(keys: readonly VerificationKey[], header: JwtHeader): VerificationKey | undefined {
  const algorithm = checkAlgorithm(header.alg);
  const fitting = keys.filter(
    (candidate) =>
      candidate.kty === algorithm.kty &&
      (candidate.alg === undefined || candidate.alg === header.alg) &&
      (algorithm.curve === undefined || candidate.crv === algorithm.curve.crv),
  );
  if (header.kid !== undefined) return fitting.find((candidate) => candidate.kid === header.kid);
  return fitting.length === 1 ? fitting[0] : undefined;
}

/** Checks the signature with the key; a bad one is a `jwt_bad_signature`. */
export function checkSignature(token: DecodedJwt, key: VerificationKey): void {
  const algorithm = checkAlgorithm(token.header.alg);
  const data = Buffer.from(token.signingInput, 'ascii');
  let valid: boolean;
  if (algorithm.curve) {
    // JWS carries ECDSA signatures as the raw r || s pair, not DER.
    valid =
      token.signature.length === algorithm.curve.signatureBytes && verify(algorithm.hash, data, { key: key.key, dsaEncoding: 'ieee-p1363' }, token.signature);
  } else {
    valid = verify(algorithm.hash, data, key.key, token.signature);
  }
  if (!valid) throw new JwtError('jwt_bad_signature', `The token's signature does not verify with the key${key.kid ? ` "${key.kid}"` : ''} of its issuer.`);
}

const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString();

function numericDate(payload: Record<string, unknown>, claim: 'exp' | 'nbf' | 'iat'): number | undefined {
  const value = payload[claim];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new JwtError('jwt_malformed', `The token's "${claim}" must be a number of seconds since the epoch.`);
  return value;
}

/**
 * `exp` (required), `nbf` and `iat` against the clock, with `toleranceSeconds` either way. An
 * expired token's message gives its expiry time.
 */
export function checkTimes(payload: Record<string, unknown>, nowSeconds: number, toleranceSeconds: number): void {
  const exp = numericDate(payload, 'exp');
  const nbf = numericDate(payload, 'nbf');
  const iat = numericDate(payload, 'iat');
  if (exp === undefined) throw new JwtError('jwt_malformed', 'The token has no "exp" (expiry) claim; tokens that never expire are not accepted.');
  if (nowSeconds - toleranceSeconds >= exp) {
    throw new JwtError(
      'jwt_expired',
      `The token expired at ${isoTime(exp)} (now ${isoTime(Math.floor(nowSeconds))}, ${toleranceSeconds} s of clock tolerance).`,
    );
  }
  if (nbf !== undefined && nowSeconds + toleranceSeconds < nbf) {
    throw new JwtError(
      'jwt_not_yet_valid',
      `The token is not valid before ${isoTime(nbf)} (now ${isoTime(Math.floor(nowSeconds))}, ${toleranceSeconds} s of clock tolerance).`,
    );
  }
  if (iat !== undefined && nowSeconds + toleranceSeconds < iat) {
    throw new JwtError('jwt_not_yet_valid', `The token was issued in the future, at ${isoTime(iat)} (now ${isoTime(Math.floor(nowSeconds))}).`);
  }
}

/** The token's `aud` as a list (RFC 7519 §4.1.3: a string or an array of strings). */
export function audiencesOf(payload: Record<string, unknown>): string[] {
  const aud = payload.aud;
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud) && aud.every((value) => typeof value === 'string')) return aud;
  if (aud === undefined) return [];
  throw new JwtError('jwt_malformed', 'The token\'s "aud" must be a string or a list of strings.');
}

/** A claim as a list of strings: a space-separated string (OAuth's `scope`) or a list of strings; anything else is none. */
export function claimList(payload: Record<string, unknown>, claim: string): string[] {
  const value = claimAt(payload, claim);
  if (typeof value === 'string') return value.split(' ').filter((item) => item !== '');
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/** A claim by name; a dotted name (`realm_access.roles`) reads nested objects when no claim has the whole name. */
export function claimAt(payload: Record<string, unknown>, claim: string): unknown {
  if (Object.hasOwn(payload, claim)) return payload[claim];
  let value: unknown = payload;
  for (const part of claim.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
