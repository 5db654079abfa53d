import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A signing key of a test identity provider. */
export interface TestKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  publicJwk: Record<string, unknown>;
}

export function newKey(alg: 'RS256' | 'ES256', kid: string): TestKey {
  const { privateKey, publicKey } = alg === 'RS256' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, alg, privateKey, publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' } };
}

const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS of the claims, signed with the key (or with the header the test gives). */
export function signToken(key: TestKey, claims: Record<string, unknown>, header: Record<string, unknown> = {}): string {
  const input = `${part({ alg: key.alg, typ: 'JWT', kid: key.kid, ...header })}.${part(claims)}`;
  const signature =
    key.alg === 'RS256'
      ? sign('sha256', Buffer.from(input), key.privateKey)
      : sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

/** A token with any header and no valid signature (for `alg: none`, `HS256`). */
export function unsignedToken(header: Record<string, unknown>, claims: Record<string, unknown>, signature = ''): string {
  return `${part(header)}.${part(claims)}.${signature}`;
}

/** A JWKS endpoint on loopback whose keys the test changes, counting the fetches. */
export interface JwksServer {
  url: string;
  keys: TestKey[];
  fetches: number;
  close(): Promise<void>;
}

export async function startJwksServer(keys: TestKey[]): Promise<JwksServer> {
  const state: JwksServer = { url: '', keys, fetches: 0, close: async () => {} };
  const server: Server = createServer((_request, response) => {
    state.fetches++;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: state.keys.map((key) => key.publicJwk) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  state.close = () => new Promise((resolve) => server.close(() => resolve()));
  return state;
}
