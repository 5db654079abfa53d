import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownPath, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch, waitForLogs, type TestResponse } from '../support/gateway-client';
import { newKey, signToken, startJwksServer, unsignedToken, type JwksServer, type TestKey } from '../support/jwt-issuer';

const json = { 'content-type': 'application/json' };
const run = randomBytes(6).toString('hex');
const issuer = `https://id-${run}.example.test`;
const rotatingIssuer = `https://rotating-${run}.example.test`;

let jwks: JwksServer;
let rotatingJwks: JwksServer;
let upstream: FakeUpstream;
let rsa: TestKey;
let ec: TestKey;
let rotating: TestKey;
let rotatingFirstUsedAt = 0;
let teamWs: string;
let otherWs: string;
let otherAdminKey: string;
let teamProvider: any;
let orgProvider: any;
let teamConfigId: string;
let otherConfigId: string;

async function call(key: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> {
  return gatewayFetch(path, {
    method,
    headers: { ...json, ...(key === undefined ? {} : { 'x-gateway-api-key': key }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** A request with the token in Authorization and no x-gateway-api-key. */
async function bearer(token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> {
  const { gatewayUrl } = env();
  return fetch(`${gatewayUrl}${path}`, {
    method,
    headers: { ...json, authorization: `Bearer ${token}`, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  }) as Promise<TestResponse>;
}

async function expectStatus(response: TestResponse | Promise<TestResponse>, status: number): Promise<any> {
  const answered = await response;
  const body = await answered.json();
  expect(answered.status, JSON.stringify(body)).toBe(status);
  return status >= 400 ? body.error : body;
}

const now = () => Math.floor(Date.now() / 1000);
const claims = (extra: Record<string, unknown> = {}) => ({ iss: issuer, aud: 'gateway', sub: 'alice', exp: now() + 600, iat: now(), ...extra });
const token = (extra: Record<string, unknown> = {}, key = rsa, header: Record<string, unknown> = {}) => signToken(key, claims(extra), header);

beforeAll(async () => {
  rsa = newKey('RS256', `rsa-${run}`);
  ec = newKey('ES256', `ec-${run}`);
  rotating = newKey('RS256', `rot-1-${run}`);
  jwks = await startJwksServer([rsa, ec]);
  rotatingJwks = await startJwksServer([rotating]);
  upstream = await startFakeUpstream();

  teamWs = (await expectStatus(call(undefined, 'POST', '/workspaces', { name: `JWT team ${run}` }), 200)).id;
  otherWs = (await expectStatus(call(undefined, 'POST', '/workspaces', { name: `JWT other ${run}` }), 200)).id;
  otherAdminKey = (await expectStatus(call(undefined, 'POST', '/api-keys', { name: 'other admin', role: 'admin', workspace_id: otherWs }), 200)).key;
  const teamAdminKey = (await expectStatus(call(undefined, 'POST', '/api-keys', { name: 'team admin', role: 'admin', workspace_id: teamWs }), 200)).key;
  const config = { provider: 'openai', override_params: { model: 'gpt-4o-mini' } };
  teamConfigId = (await expectStatus(call(teamAdminKey, 'POST', '/configs', { name: 'team config', config }), 200)).id;
  otherConfigId = (await expectStatus(call(otherAdminKey, 'POST', '/configs', { name: 'other config', config }), 200)).id;

  teamProvider = await expectStatus(
    call(undefined, 'POST', '/auth/jwt-providers', { issuer, jwks_uri: jwks.url, audience: 'gateway', workspace_id: teamWs, log_claims: ['email'] }),
    200,
  );
  orgProvider = await expectStatus(
    call(undefined, 'POST', '/auth/jwt-providers', {
      issuer,
      jwks_uri: jwks.url,
      audience: 'gateway-org',
      workspace_claim: 'tenant.workspace',
      scopes_claim: 'scp',
      roles_claim: 'groups',
      clock_tolerance_s: 0,
    }),
    200,
  );
  await expectStatus(
    call(undefined, 'POST', '/auth/jwt-providers', { issuer: rotatingIssuer, jwks_uri: rotatingJwks.url, audience: 'gateway', workspace_id: teamWs }),
    200,
  );
  // The rotating provider's key set is fetched now; its rotation test runs last, 30 s after this.
  const first = signToken(rotating, { iss: rotatingIssuer, aud: 'gateway', exp: now() + 600, scope: 'list' });
  await expectStatus(call(first, 'GET', '/configs'), 200);
  rotatingFirstUsedAt = Date.now();
});

afterAll(async () => {
  await jwks?.close();
  await rotatingJwks?.close();
  await upstream?.close();
});

describe('JWT identity providers (/v1/auth/jwt-providers)', () => {
  it('answers what it stored, with the defaults filled in', async () => {
    expect(teamProvider).toMatchObject({
      object: 'jwt_provider',
      issuer,
      audience: 'gateway',
      workspace_id: teamWs,
      workspace_claim: null,
      scopes_claim: 'scope',
      roles_claim: 'roles',
      clock_tolerance_s: 30,
      log_claims: ['email'],
    });
    expect(teamProvider.id).toMatch(/^jwtp_[0-9a-z]{26}$/);
    expect(await expectStatus(call(undefined, 'GET', `/auth/jwt-providers/${orgProvider.id}`), 200)).toMatchObject({
      workspace_id: null,
      workspace_claim: 'tenant.workspace',
    });
    const listed = await expectStatus(call(undefined, 'GET', '/auth/jwt-providers?limit=100'), 200);
    expect(listed.data.map((provider: any) => provider.id)).toEqual(expect.arrayContaining([teamProvider.id, orgProvider.id]));
  });

  it('refuses bad fields with a 400 naming the field', async () => {
    const base = { issuer: `https://bad-${run}.example.test`, jwks_uri: jwks.url, audience: 'x' };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, issuer: undefined }, 'issuer'],
      [{ ...base, issuer: '' }, 'issuer'],
      [{ ...base, jwks_uri: 'ftp://id.example/jwks' }, 'jwks_uri'],
      [{ ...base, audience: 7 }, 'audience'],
      [{ ...base, workspace_id: 'nope' }, 'workspace_id'],
      [{ ...base, workspace_id: teamWs, workspace_claim: 'ws' }, 'workspace_claim'],
      [{ ...base, clock_tolerance_s: 9_999 }, 'clock_tolerance_s'],
      [{ ...base, scopes_claim: '' }, 'scopes_claim'],
      [{ ...base, log_claims: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'] }, 'log_claims'],
      [{ ...base, algorithm: 'RS256' }, 'algorithm'],
    ];
    for (const [body, param] of cases) {
      const error = await expectStatus(call(undefined, 'POST', '/auth/jwt-providers', body), 400);
      expect(error, JSON.stringify(body)).toMatchObject({ param, code: 'invalid_jwt_provider_body' });
    }
    const taken = await expectStatus(call(undefined, 'POST', '/auth/jwt-providers', { issuer, jwks_uri: jwks.url, audience: 'gateway' }), 409);
    expect(taken.code).toBe('jwt_provider_exists');
  });

  it('lets admins manage their own workspace’s providers only, and members none', async () => {
    const error = await expectStatus(
      call(otherAdminKey, 'POST', '/auth/jwt-providers', { issuer: `https://x-${run}`, jwks_uri: jwks.url, audience: 'a', workspace_claim: 'ws' }),
      403,
    );
    expect(error.code).toBe('owner_required');
    expect((await expectStatus(call(otherAdminKey, 'GET', `/auth/jwt-providers/${teamProvider.id}`), 404)).code).toBe('jwt_provider_not_found');
    expect((await expectStatus(call(otherAdminKey, 'GET', '/auth/jwt-providers'), 200)).data).toEqual([]);
    const own = await expectStatus(
      call(otherAdminKey, 'POST', '/auth/jwt-providers', { issuer: `https://own-${run}`, jwks_uri: jwks.url, audience: 'a' }),
      200,
    );
    expect(own.workspace_id).toBe(otherWs);
    const changed = await expectStatus(call(otherAdminKey, 'PUT', `/auth/jwt-providers/${own.id}`, { clock_tolerance_s: 5, audience: 'b' }), 200);
    expect(changed).toMatchObject({ clock_tolerance_s: 5, audience: 'b', issuer: `https://own-${run}` });
    // The old pair is free again.
    const again = await expectStatus(
      call(otherAdminKey, 'POST', '/auth/jwt-providers', { issuer: `https://own-${run}`, jwks_uri: jwks.url, audience: 'a' }),
      200,
    );
    const member = (await expectStatus(call(otherAdminKey, 'POST', '/api-keys', { name: 'member' }), 200)).key;
    expect((await expectStatus(call(member, 'GET', '/auth/jwt-providers'), 403)).code).toBe('admin_required');
    await expectStatus(call(otherAdminKey, 'DELETE', `/auth/jwt-providers/${own.id}`), 200);
    await expectStatus(call(otherAdminKey, 'DELETE', `/auth/jwt-providers/${again.id}`), 200);
    await expectStatus(call(otherAdminKey, 'GET', `/auth/jwt-providers/${own.id}`), 404);
  });
});

describe('authentication by JWT', () => {
  it('accepts RS256 and ES256 tokens, in Authorization or in x-gateway-api-key', async () => {
    const rs = await expectStatus(bearer(token({ scope: 'list' }), 'GET', '/configs'), 200);
    expect(rs.data.map((config: any) => config.id)).toContain(teamConfigId);
    const es = await expectStatus(call(token({ scope: 'list' }, ec), 'GET', '/configs'), 200);
    expect(es.data.map((config: any) => config.id)).toEqual(rs.data.map((config: any) => config.id));
  });

  it('keeps another workspace’s resources out of sight', async () => {
    const read = token({ scope: 'read list' });
    expect((await expectStatus(call(read, 'GET', `/configs/${teamConfigId}`), 200)).id).toBe(teamConfigId);
    await expectStatus(call(read, 'GET', `/configs/${otherConfigId}`), 404);
    const listed = await expectStatus(call(read, 'GET', '/configs'), 200);
    expect(listed.data.map((config: any) => config.id)).not.toContain(otherConfigId);
  });

  it('asks for the scope a request needs: read for one resource, list for lists, completions for inference', async () => {
    const listOnly = await expectStatus(call(token({ scope: 'list' }), 'GET', `/configs/${teamConfigId}`), 403);
    expect(listOnly).toMatchObject({ code: 'missing_scope', param: 'read' });
    expect(listOnly.message).toContain('"read"');
    expect((await expectStatus(call(token({ scope: 'read' }), 'GET', '/configs'), 403)).param).toBe('list');
    expect((await expectStatus(call(token({ scope: ['read', 'list'] }), 'GET', '/configs'), 200)).object).toBe('list');
    const noCompletions = await expectStatus(
      call(token({ scope: 'read list' }), 'POST', '/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      403,
    );
    expect(noCompletions).toMatchObject({ code: 'missing_scope', param: 'completions' });
    const write = await expectStatus(call(token({ scope: 'read list completions' }), 'POST', '/configs', { name: 'x', config: { provider: 'openai' } }), 403);
    expect(write.code).toBe('jwt_role_required');
  });

  it('grants by role what the same key role grants', async () => {
    const member = token({ roles: ['member'] });
    await expectStatus(call(member, 'GET', `/configs/${teamConfigId}`), 200);
    await expectStatus(call(member, 'GET', '/configs'), 200);
    expect((await expectStatus(call(member, 'POST', '/configs', { name: 'x', config: { provider: 'openai' } }), 403)).code).toBe('admin_required');
    const admin = token({ roles: 'admin' });
    const created = await expectStatus(call(admin, 'POST', '/configs', { name: `by token ${run}`, config: { provider: 'openai' } }), 200);
    expect((await expectStatus(call(token({ scope: 'read' }), 'GET', `/configs/${created.id}`), 200)).name).toBe(`by token ${run}`);
    // No token makes an owner.
    expect((await expectStatus(call(token({ roles: ['owner'] }), 'POST', '/workspaces', { name: 'nope' }), 403)).code).toBe('jwt_role_required');
    expect((await expectStatus(call(admin, 'POST', '/workspaces', { name: 'nope' }), 403)).code).toBe('owner_required');
  });

  it('takes the workspace from a claim for an organisation-wide provider', async () => {
    const forOther = signToken(rsa, claims({ aud: 'gateway-org', scp: ['read', 'list'], tenant: { workspace: otherWs } }));
    const listed = await expectStatus(call(forOther, 'GET', '/configs'), 200);
    expect(listed.data.map((config: any) => config.id)).toContain(otherConfigId);
    expect(listed.data.map((config: any) => config.id)).not.toContain(teamConfigId);
    const admin = signToken(rsa, claims({ aud: 'gateway-org', groups: ['admin'], tenant: { workspace: otherWs } }));
    await expectStatus(call(admin, 'DELETE', `/configs/${teamConfigId}`), 404);
    const unknown = signToken(rsa, claims({ aud: 'gateway-org', scp: 'list', tenant: { workspace: 'ws_doesnotexist' } }));
    expect((await expectStatus(call(unknown, 'GET', '/configs'), 401)).code).toBe('jwt_unknown_workspace');
    const missing = signToken(rsa, claims({ aud: 'gateway-org', scp: 'list' }));
    expect((await expectStatus(call(missing, 'GET', '/configs'), 401)).code).toBe('jwt_malformed');
  });

  it('refuses bad tokens with a 401 whose code says what is wrong', async () => {
    const expectCode = async (sent: string, code: string) => {
      const error = await expectStatus(call(sent, 'GET', '/configs'), 401);
      expect(error.code, error.message).toBe(code);
      return error.message as string;
    };
    const exp = now() - 120;
    const expired = await expectCode(token({ scope: 'list', exp }), 'jwt_expired');
    expect(expired).toContain(new Date(exp * 1000).toISOString());
    // Within the provider's 30 s of tolerance, an expired token still passes; the org provider allows none.
    await expectStatus(call(token({ scope: 'list', exp: now() - 10 }), 'GET', '/configs'), 200);
    await expectCode(signToken(rsa, claims({ aud: 'gateway-org', scp: 'list', tenant: { workspace: otherWs }, exp: now() - 2 })), 'jwt_expired');
    await expectCode(token({ scope: 'list', nbf: now() + 600 }), 'jwt_not_yet_valid');
    expect(await expectCode(token({ scope: 'list', iss: `https://unknown-${run}.example.test` }), 'jwt_wrong_issuer')).toContain('not a registered');
    await expectCode(token({ scope: 'list', aud: 'someone-else' }), 'jwt_wrong_audience');
    await expectCode(token({ scope: 'list' }, rsa, { kid: 'no-such-key' }), 'jwt_unknown_kid');
    const [header, payload] = token({ scope: 'list' }).split('.');
    const otherSignature = token({ scope: 'list', sub: 'mallory' }).split('.')[2];
    await expectCode(`${header}.${payload}.${otherSignature}`, 'jwt_bad_signature');
    const impostor = { ...newKey('RS256', rsa.kid) };
    await expectCode(signToken(impostor, claims({ scope: 'list' })), 'jwt_bad_signature');
    await expectCode('eyJhbGciOiJSUzI1NiJ9.bm90LWpzb24.c2ln', 'jwt_malformed');
    await expectCode(token({ scope: 'list', exp: undefined }), 'jwt_malformed');
    await expectCode(unsignedToken({ alg: 'none' }, claims({ scope: 'list' })), 'jwt_algorithm_refused');
    await expectCode(unsignedToken({ alg: 'HS256', kid: rsa.kid }, claims({ scope: 'list' }), 'c2ln'), 'jwt_algorithm_refused');
    // A key set that cannot be fetched is the gateway's failure to check the token, not the token's fault.
    const downIssuer = `https://down-${run}.example.test`;
    await expectStatus(
      call(undefined, 'POST', '/auth/jwt-providers', { issuer: downIssuer, jwks_uri: 'http://127.0.0.1:1/jwks.json', audience: 'gateway' }),
      200,
    );
    const down = await expectStatus(call(token({ iss: downIssuer, scope: 'list' }), 'GET', '/configs'), 502);
    expect(down.code).toBe('jwks_unavailable');
    // In Authorization too, when there is no x-gateway-api-key.
    expect((await expectStatus(bearer(token({ scope: 'list', aud: 'someone-else' }), 'GET', '/configs'), 401)).code).toBe('jwt_wrong_audience');
  });

  it('runs inference with a completions token; the provider key in Authorization still goes to the provider', async () => {
    const host = ownPath(upstream, 'jwt', run);
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] };
    const traceId = `jwt-trace-${run}`;
    const viaHeader = await call(token({ scope: 'completions', email: 'alice@example.test' }), 'POST', '/chat/completions', body, {
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': host.custom_host,
      authorization: 'Bearer sk-provider-key',
      'x-gateway-trace-id': traceId,
    });
    expect(viaHeader.status, await viaHeader.clone().text()).toBe(200);
    const sent = upstream.requests.filter((request) => request.path.startsWith(host.prefix));
    expect(sent.at(-1)!.headers.authorization).toBe('Bearer sk-provider-key');

    // A token in Authorization is the gateway's: the provider key comes from the config, and the token never travels on.
    const viaBearer = await bearer(token({ scope: 'completions' }), 'POST', '/chat/completions', body, {
      'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk-from-config', custom_host: host.custom_host }),
    });
    expect(viaBearer.status, await viaBearer.clone().text()).toBe(200);
    const last = upstream.requests.filter((request) => request.path.startsWith(host.prefix)).at(-1)!;
    expect(last.headers.authorization).toBe('Bearer sk-from-config');

    // With a gateway key, a JWT in Authorization is the provider's credential (an Entra ID token, say), even one of a registered issuer.
    const providerToken = token({ scope: 'completions' });
    const withKey = await call(undefined, 'POST', '/chat/completions', body, {
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': host.custom_host,
      authorization: `Bearer ${providerToken}`,
    });
    expect(withKey.status, await withKey.clone().text()).toBe(200);
    expect(upstream.requests.filter((request) => request.path.startsWith(host.prefix)).at(-1)!.headers.authorization).toBe(`Bearer ${providerToken}`);

    const [record] = await waitForLogs(traceId, { gatewayKey: token({ roles: ['member'] }) });
    expect(record).toMatchObject({ jwt_sub: 'alice', jwt_claims: { email: 'alice@example.test' }, workspace_id: teamWs, api_key_id: teamProvider.id });
  });
});

describe('key rotation', () => {
  it('fetches the key set again for an unknown kid, at most once per 30 s', { timeout: 60_000 }, async () => {
    const rotated = newKey('ES256', `rot-2-${run}`);
    rotatingJwks.keys = [rotating, rotated];
    const fetchesBefore = rotatingJwks.fetches;
    const next = signToken(rotated, { iss: rotatingIssuer, aud: 'gateway', exp: now() + 600, scope: 'list' });
    const wait = rotatingFirstUsedAt + 30_500 - Date.now();
    if (wait > 2_000) {
      // Within 30 s of the last fetch, an unknown kid is refused without asking the endpoint again.
      expect((await expectStatus(call(next, 'GET', '/configs'), 401)).code).toBe('jwt_unknown_kid');
      expect((await expectStatus(call(next, 'GET', '/configs'), 401)).code).toBe('jwt_unknown_kid');
      expect(rotatingJwks.fetches).toBe(fetchesBefore);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, rotatingFirstUsedAt + 30_500 - Date.now())));
    await expectStatus(call(next, 'GET', '/configs'), 200);
    expect(rotatingJwks.fetches).toBe(fetchesBefore + 1);
    // Both keys now verify without another fetch.
    await expectStatus(call(signToken(rotating, { iss: rotatingIssuer, aud: 'gateway', exp: now() + 600, scope: 'list' }), 'GET', '/configs'), 200);
    expect(rotatingJwks.fetches).toBe(fetchesBefore + 1);
  });
});
