import { describe, expect, it } from 'vitest';
import { fetchKeySetDocument, KeySetCache, refetchIntervalMs } from '../../lib/auth/jwks';
import {
  audiencesOf,
  checkAlgorithm,
  checkSignature,
  checkTimes,
  claimList,
  decodeJwt,
  JwtError,
  looksLikeJwt,
  readKeySet,
  selectKey,
} from '../../lib/auth/jwt-verify';
import { requiredScope } from '../../lib/http/token-scope';
import { newKey, signToken, startJwksServer, unsignedToken } from '../support/jwt-issuer';

const rsa = newKey('RS256', 'rsa-1');
const ec = newKey('ES256', 'ec-1');
const claims = { iss: 'https://id.example', aud: 'gateway', sub: 'user-1', exp: 2_000_000_000 };

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    if (error instanceof JwtError) return error.code;
    throw error;
  }
  return undefined;
}

/** Decodes, finds the key in the set and checks the signature, as authentication does. */
function verifyWith(token: string, keys = readKeySet({ keys: [rsa.publicJwk, ec.publicJwk] })) {
  const decoded = decodeJwt(token);
  const key = selectKey(keys, decoded.header);
  if (!key) throw new JwtError('jwt_unknown_kid', 'no key');
  checkSignature(decoded, key);
  return decoded.payload;
}

describe('JWT verification', () => {
  it('verifies RS256 and ES256 tokens (ES256 signatures as raw r || s)', () => {
    expect(verifyWith(signToken(rsa, claims))).toMatchObject({ sub: 'user-1' });
    const esToken = signToken(ec, claims);
    expect(Buffer.from(esToken.split('.')[2]!, 'base64url')).toHaveLength(64);
    expect(verifyWith(esToken)).toMatchObject({ sub: 'user-1' });
  });

  it('refuses a token whose payload was changed, or signed by another key under the same kid', () => {
    const [header, , signature] = signToken(rsa, claims).split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'admin' })).toString('base64url')}.${signature}`;
    expect(codeOf(() => verifyWith(forged))).toBe('jwt_bad_signature');
    const impostor = { ...newKey('ES256', 'ec-1') };
    expect(codeOf(() => verifyWith(signToken(impostor, claims)))).toBe('jwt_bad_signature');
  });

  it('refuses alg none and the HMAC family, even when signed with the public key as a secret', () => {
    expect(codeOf(() => checkAlgorithm('none'))).toBe('jwt_algorithm_refused');
    expect(codeOf(() => checkAlgorithm('HS256'))).toBe('jwt_algorithm_refused');
    expect(codeOf(() => verifyWith(unsignedToken({ alg: 'none', kid: 'rsa-1' }, claims)))).toBe('jwt_algorithm_refused');
    expect(codeOf(() => verifyWith(unsignedToken({ alg: 'HS256', kid: 'rsa-1' }, claims, 'c2ln')))).toBe('jwt_algorithm_refused');
  });

  it('names an unknown kid, and a key of the wrong type never verifies', () => {
    expect(codeOf(() => verifyWith(signToken(newKey('RS256', 'rotated'), claims)))).toBe('jwt_unknown_kid');
    // An ES256 token that names the RSA key's kid finds no key: a key is only used for its own algorithm.
    expect(codeOf(() => verifyWith(signToken(ec, claims, { kid: 'rsa-1' })))).toBe('jwt_unknown_kid');
  });

  it('calls anything that is not a compact JWS malformed', () => {
    for (const token of ['abc', 'a.b', 'a.b.c.d.e', `${Buffer.from('[1]').toString('base64url')}.e30.`, `e30.e30.sig`, 'e3.e30.x']) {
      expect(
        codeOf(() => decodeJwt(token)),
        token,
      ).toBe('jwt_malformed');
    }
    expect(looksLikeJwt('gwk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG')).toBe(false);
    expect(looksLikeJwt(signToken(rsa, claims))).toBe(true);
    expect(looksLikeJwt('x'.repeat(9000))).toBe(false);
  });

  it('checks exp, nbf and iat with the clock tolerance; an expired token says when it expired', () => {
    expect(() => checkTimes({ exp: 1_000 }, 1_000, 0)).toThrow(/expired at 1970-01-01T00:16:40.000Z/);
    expect(codeOf(() => checkTimes({ exp: 1_000 }, 1_000, 0))).toBe('jwt_expired');
    expect(codeOf(() => checkTimes({ exp: 1_000 }, 1_020, 30))).toBeUndefined();
    expect(codeOf(() => checkTimes({ exp: 5_000, nbf: 2_000 }, 1_000, 30))).toBe('jwt_not_yet_valid');
    expect(codeOf(() => checkTimes({ exp: 5_000, nbf: 1_020 }, 1_000, 30))).toBeUndefined();
    expect(codeOf(() => checkTimes({ exp: 5_000, iat: 3_000 }, 1_000, 30))).toBe('jwt_not_yet_valid');
    expect(codeOf(() => checkTimes({}, 1_000, 30))).toBe('jwt_malformed');
    expect(codeOf(() => checkTimes({ exp: '5000' }, 1_000, 30))).toBe('jwt_malformed');
  });

  it('reads audiences, scopes and roles as strings or lists, nested claims by dotted name', () => {
    expect(audiencesOf({ aud: 'a' })).toEqual(['a']);
    expect(audiencesOf({ aud: ['a', 'b'] })).toEqual(['a', 'b']);
    expect(codeOf(() => audiencesOf({ aud: 3 }))).toBe('jwt_malformed');
    expect(claimList({ scope: 'read  list completions' }, 'scope')).toEqual(['read', 'list', 'completions']);
    expect(claimList({ scp: ['read', 7, 'list'] }, 'scp')).toEqual(['read', 'list']);
    expect(claimList({ realm_access: { roles: ['admin'] } }, 'realm_access.roles')).toEqual(['admin']);
    expect(claimList({}, 'roles')).toEqual([]);
  });

  it('skips keys that cannot verify: private parts, encryption keys, short RSA keys', () => {
    const keys = readKeySet({
      keys: [{ ...rsa.publicJwk, use: 'enc' }, { kty: 'oct', k: 'c2VjcmV0' }, { kty: 'RSA', n: 'AQAB', e: 'AQAB', kid: 'tiny' }, ec.publicJwk],
    });
    expect(keys.map((key) => key.kid)).toEqual(['ec-1']);
    expect(() => readKeySet({})).toThrow(/keys/);
  });
});

describe('the key set cache', () => {
  it('refetches for an unknown kid at most once per 30 s per provider', async () => {
    let now = 1_000_000;
    let served = [rsa.publicJwk];
    let fetches = 0;
    const cache = new KeySetCache(
      async () => {
        fetches++;
        return { keys: served };
      },
      () => now,
    );
    const byKid = (kid: string) => (keys: readonly { kid?: string }[]) => keys.find((key) => key.kid === kid) as never;
    expect(await cache.keyFor('p1', 'http://id.test/jwks', byKid('rsa-1'))).toBeDefined();
    expect(fetches).toBe(1);
    // A rotation within 30 s of the fetch is not fetched again, however many tokens ask.
    served = [rsa.publicJwk, ec.publicJwk];
    for (let i = 0; i < 5; i++) expect(await cache.keyFor('p1', 'http://id.test/jwks', byKid('ec-1'))).toBeUndefined();
    expect(fetches).toBe(1);
    now += refetchIntervalMs;
    expect(await cache.keyFor('p1', 'http://id.test/jwks', byKid('ec-1'))).toBeDefined();
    expect(fetches).toBe(2);
    // Unknown kids right after: no fetch; another provider has its own interval.
    expect(await cache.keyFor('p1', 'http://id.test/jwks', byKid('nope'))).toBeUndefined();
    expect(fetches).toBe(2);
    expect(await cache.keyFor('p2', 'http://id.test/jwks', byKid('rsa-1'))).toBeDefined();
    expect(fetches).toBe(3);
  });

  it('keeps serving a held set when the endpoint fails, and fails when it holds none', async () => {
    let now = 0;
    let up = true;
    const cache = new KeySetCache(
      async () => {
        if (!up) throw new Error('down');
        return { keys: [rsa.publicJwk] };
      },
      () => now,
    );
    const first = (keys: readonly unknown[]) => keys[0] as never;
    await cache.keyFor('p', 'http://id.test/jwks', first);
    up = false;
    now += 11 * 60_000;
    expect(await cache.keyFor('p', 'http://id.test/jwks', first)).toBeDefined();
    await expect(cache.keyFor('q', 'http://id.test/jwks', first)).rejects.toThrow('down');
  });
});

describe('fetching a key set', () => {
  it('goes through the outbound guard: loopback is refused on AWS unless allow-listed', async () => {
    const server = await startJwksServer([rsa]);
    const saved = { mode: process.env.GATEWAY_MODE, allow: process.env.GATEWAY_OUTBOUND_ALLOWLIST };
    try {
      process.env.GATEWAY_MODE = 'aws';
      delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
      await expect(fetchKeySetDocument(new URL(server.url))).rejects.toThrow(/not allowed/);
      expect(server.fetches).toBe(0);
      process.env.GATEWAY_OUTBOUND_ALLOWLIST = '127.0.0.1';
      expect(readKeySet(await fetchKeySetDocument(new URL(server.url))).map((key) => key.kid)).toEqual([rsa.kid]);
      expect(server.fetches).toBe(1);
    } finally {
      if (saved.mode === undefined) delete process.env.GATEWAY_MODE;
      else process.env.GATEWAY_MODE = saved.mode;
      if (saved.allow === undefined) delete process.env.GATEWAY_OUTBOUND_ALLOWLIST;
      else process.env.GATEWAY_OUTBOUND_ALLOWLIST = saved.allow;
      await server.close();
    }
  });
});

describe('the scope a request needs', () => {
  it('derives it from the method and the resource', () => {
    expect(requiredScope({ method: 'POST', resource: '/v1/chat/completions' })).toBe('completions');
    expect(requiredScope({ method: 'POST', resource: '/v1/prompts/{promptId}/completions' })).toBe('completions');
    expect(requiredScope({ method: 'GET', resource: '/v1/{proxy+}' })).toBe('completions');
    expect(requiredScope({ method: 'GET', resource: '/v1/configs/{configId}' })).toBe('read');
    expect(requiredScope({ method: 'GET', resource: '/v1/files/{fileId}/content' })).toBe('read');
    expect(requiredScope({ method: 'GET', resource: '/v1/configs' })).toBe('list');
    expect(requiredScope({ method: 'GET', resource: '/v1/prompts/{promptId}/versions' })).toBe('list');
    expect(requiredScope({ method: 'POST', resource: '/v1/configs' })).toBeUndefined();
    expect(requiredScope({ method: 'DELETE', resource: '/v1/configs/{configId}' })).toBeUndefined();
  });
});

describe('registering a provider outside local mode', () => {
  it('takes only an https key set URL', async () => {
    const { jwtProvidersRoute } = await import('../../lib/control/jwt-providers-route');
    const { RequestRecorder } = await import('../../lib/observability/request-recorder');
    const saved = process.env.GATEWAY_MODE;
    process.env.GATEWAY_MODE = 'aws';
    try {
      const body = { issuer: 'https://id.example', jwks_uri: 'http://id.example/jwks.json', audience: 'gateway' };
      const answer = await jwtProvidersRoute({
        request: {
          method: 'POST',
          path: '/v1/auth/jwt-providers',
          resource: '/v1/auth/jwt-providers',
          rawQuery: '',
          query: {},
          headers: { 'content-type': 'application/json' },
          pathParameters: {},
          body: Buffer.from(JSON.stringify(body)),
          requestId: 'req',
          receivedAt: 0,
        },
        auth: { keyId: 'key_1', role: 'owner', organisationId: 'org_1', workspaceId: 'ws_1' },
        trace: {} as never,
        recorder: new RequestRecorder('log_1', () => {}),
        waitUntil: () => {},
      }).catch((error: unknown) => error);
      expect(answer).toMatchObject({ status: 400, param: 'jwks_uri', code: 'invalid_jwt_provider_body' });
      expect((answer as Error).message).toContain('https');
    } finally {
      if (saved === undefined) delete process.env.GATEWAY_MODE;
      else process.env.GATEWAY_MODE = saved;
    }
  });
});
