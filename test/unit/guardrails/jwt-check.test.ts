import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clearJwksCache } from '../../../lib/guardrails/checks/jwt';

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
import { checkInput, run } from './check-input';

describe('default.jwt (JWKS on loopback)', () => {
  let server: Server;
  let jwksUri: string;
  let keys: JWK[] = [];
  let fetches = 0;
  let signingKey: PrivateKey;
  let otherKey: PrivateKey;
  const mode = process.env.GATEWAY_MODE;

  const sign = (claims: Record<string, unknown> = {}, key = signingKey, kid = 'key-1', issuedAt?: number, expiresIn: string | number = '10m') =>
    new SignJWT({ sub: 'user-1', ...claims }).setProtectedHeader({ alg: 'RS256', kid }).setIssuedAt(issuedAt).setExpirationTime(expiresIn).sign(key);
  const withToken = (token: string | undefined, header = 'authorization') =>
    checkInput('hi', { headers: token === undefined ? {} : { [header]: `Bearer ${token}` } });

  beforeAll(async () => {
    process.env.GATEWAY_MODE = 'local';
    const pair = await generateKeyPair('RS256');
    signingKey = pair.privateKey;
    keys = [{ ...(await exportJWK(pair.publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' }];
    otherKey = (await generateKeyPair('RS256')).privateKey;
    server = createServer((request, response) => {
      fetches++;
      if (request.url === '/broken') {
        response.writeHead(500);
        response.end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    jwksUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(async () => {
    process.env.GATEWAY_MODE = mode;
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => clearJwksCache());

  it('passes a valid token and keeps the key set between requests', async () => {
    const before = fetches;
    const result = await run('default.jwt', { jwksUri }, withToken(await sign()));
    expect(result).toMatchObject({ verdict: true, data: { subject: 'user-1', keyId: 'key-1', algorithm: 'RS256' } });
    expect((await run('default.jwt', { jwksUri }, withToken(await sign()))).verdict).toBe(true);
    expect(fetches).toBe(before + 1);
  });

  it.each([
    [
      'an expired token',
      async () => sign({}, signingKey, 'key-1', Math.floor(Date.now() / 1000) - 3_600, Math.floor(Date.now() / 1000) - 60),
      /"exp" claim timestamp check failed/,
    ],
    ['a token signed by another key', async () => sign({}, otherKey), /signature verification failed/],
    [
      'a token older than maxTokenAge',
      async () => sign({}, signingKey, 'key-1', Math.floor(Date.now() / 1000) - 7_200, '10m'),
      /"iat" claim timestamp check failed/,
    ],
    ['a malformed token', async () => 'not.a.token', /Invalid|JWS/],
  ])('fails %s', async (_name, token, message) => {
    const result = await run('default.jwt', { jwksUri, maxTokenAge: '1h' }, withToken(await token()));
    expect(result.verdict).toBe(false);
    expect(result.error).toBeUndefined();
    expect((result.data as { explanation: string }).explanation).toMatch(message);
  });

  it('fails a request without the header, and reads the header it is told to', async () => {
    expect(await run('default.jwt', { jwksUri }, withToken(undefined))).toMatchObject({
      verdict: false,
      data: { explanation: 'The request has no authorization header.' },
    });
    expect((await run('default.jwt', { jwksUri, headerKey: 'X-User-Token' }, withToken(await sign(), 'x-user-token'))).verdict).toBe(true);
  });

  it('checks issuer, audience and algorithms when given', async () => {
    const token = await sign({ iss: 'https://issuer.example', aud: 'gateway' });
    expect((await run('default.jwt', { jwksUri, issuer: 'https://issuer.example', audience: ['gateway'] }, withToken(token))).verdict).toBe(true);
    expect((await run('default.jwt', { jwksUri, audience: ['other'] }, withToken(token))).verdict).toBe(false);
    expect((await run('default.jwt', { jwksUri, algorithms: ['ES256'] }, withToken(token))).verdict).toBe(false);
  });

  it('fetches the key set again for a key it has not seen (a rotation)', async () => {
    const rotated = await generateKeyPair('RS256');
    const token = await sign({}, rotated.privateKey, 'key-2');
    await run('default.jwt', { jwksUri }, withToken(await sign()));
    keys = [...keys, { ...(await exportJWK(rotated.publicKey)), kid: 'key-2', alg: 'RS256' }];
    // Within 30 s of the last fetch the cached set answers: the token's key is unknown.
    expect((await run('default.jwt', { jwksUri }, withToken(token))).verdict).toBe(false);
    clearJwksCache();
    expect((await run('default.jwt', { jwksUri }, withToken(token))).verdict).toBe(true);
  });

  it('fails closed when the key set cannot be fetched, unless failOnError is false', async () => {
    const broken = jwksUri.replace('/jwks.json', '/broken');
    const token = await sign();
    expect(await run('default.jwt', { jwksUri: broken }, withToken(token))).toMatchObject({
      verdict: false,
      error: expect.stringMatching(/JWKS endpoint .* status 500/),
    });
    expect(await run('default.jwt', { jwksUri: broken, failOnError: false }, withToken(token))).toMatchObject({ verdict: true });
  });

  it('is refused a loopback key set outside local mode', async () => {
    process.env.GATEWAY_MODE = 'aws';
    try {
      expect(await run('default.jwt', { jwksUri }, withToken(await sign()))).toMatchObject({ verdict: false, error: expect.stringMatching(/not allowed/) });
    } finally {
      process.env.GATEWAY_MODE = 'local';
    }
  });

  it.each([
    [{}, /`jwksUri` is required/],
    [{ jwksUri: 'x', algorithms: ['none'] }, /may not include "none"/],
    [{ jwksUri: 'http://a.example', maxTokenAge: 'forever' }, /duration such as/],
    [{ jwksUri: 'http://a.example', not: true }, /does not support `not`/],
  ])('refuses %j', async (parameters, message) => {
    expect((await run('default.jwt', parameters, withToken('x'))).error).toMatch(message);
  });
});
