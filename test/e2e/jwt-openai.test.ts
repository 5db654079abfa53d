import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownPath, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch } from '../support/gateway-client';
import { newKey, signToken, startJwksServer, type JwksServer } from '../support/jwt-issuer';

/**
 * The official client with a JWT as its API key: the client sends it as `Authorization: Bearer`,
 * with no `x-gateway-api-key`, so the gateway reads it as its own credential and the provider key
 * comes from a saved config.
 */
describe('the openai client authenticated by a JWT', () => {
  const run = randomBytes(6).toString('hex');
  const issuer = `https://e2e-${run}.example.test`;
  const key = newKey('ES256', `e2e-${run}`);
  let jwks: JwksServer;
  let upstream: FakeUpstream;
  let host: ReturnType<typeof ownPath>;
  let client: OpenAI;

  const post = async (path: string, body: unknown) => {
    const response = await gatewayFetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await response.json();
    expect(response.status, JSON.stringify(answer)).toBe(200);
    return answer;
  };

  beforeAll(async () => {
    jwks = await startJwksServer([key]);
    upstream = await startFakeUpstream();
    host = ownPath(upstream, 'jwt-e2e', run);
    await post('/auth/jwt-providers', { issuer, jwks_uri: jwks.url, audience: 'gateway' });
    const config = await post('/configs', { name: `jwt e2e ${run}`, config: { provider: 'openai', api_key: 'sk-saved-e2e', custom_host: host.custom_host } });
    const token = signToken(key, { iss: issuer, aud: 'gateway', sub: 'svc-e2e', scope: 'completions', exp: Math.floor(Date.now() / 1000) + 600 });
    client = new OpenAI({ baseURL: env().gatewayUrl, apiKey: token, maxRetries: 0, defaultHeaders: { 'x-gateway-config': config.id } });
  });
  afterAll(async () => {
    await jwks?.close();
    await upstream?.close();
  });

  it('completes, whole and streamed, with the saved key sent to the provider and never the token', async () => {
    const answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.choices[0]?.message.role).toBe('assistant');
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let chunks = 0;
    for await (const _chunk of stream) chunks++;
    expect(chunks).toBeGreaterThan(0);
    const sent = upstream.requests.filter((request) => request.path.startsWith(host.prefix));
    expect(sent).toHaveLength(2);
    for (const request of sent) expect(request.headers.authorization).toBe('Bearer sk-saved-e2e');
  });

  it('gets the 403 naming the scope for what the token may not do', async () => {
    // Listing configs needs the list scope, which the token lacks.
    const configs = await fetch(`${env().gatewayUrl}/configs`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    expect(configs.status).toBe(403);
    expect(((await configs.json()) as any).error).toMatchObject({ code: 'missing_scope', param: 'list' });
  });
});
