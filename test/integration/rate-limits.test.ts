import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch, spawnSharedGateway, waitForLogs } from '../support/gateway-client';
import { bucketOfValue, stateTableClient } from '../support/state-table';
import { connectToGatewayStore, createWorkspaceAdminKey, stateTable } from '../support/gateway-store';
import type { SpawnedGateway } from '../support/spawn-gateway';

const json = { 'content-type': 'application/json' };
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const tag = (name: string) => `${name}-${run}`;

let upstream: FakeUpstream;
let second: SpawnedGateway;
connectToGatewayStore();

async function createPolicy(body: Record<string, unknown>, gatewayKey?: string) {
  const response = await gatewayFetch('/policies/rate-limits', {
    method: 'POST',
    headers: { ...json, ...(gatewayKey ? { 'x-gateway-api-key': gatewayKey } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** A requests or tokens policy selecting only requests whose `metadata.rl` is `value`. */
const taggedPolicy = (value: string, fields: Record<string, unknown>) => ({
  conditions: [{ key: 'metadata.rl', value }],
  group_by: [{ key: 'metadata.rl' }],
  type: 'requests',
  unit: 'rpm',
  ...fields,
});

const config = (extra: Record<string, unknown> = {}) => JSON.stringify({ provider: 'openai', api_key: 'sk-rl', custom_host: `${upstream.url}/v1`, ...extra });

/** One chat request to a gateway (the shared one unless `base` says otherwise). */
async function chat(metadata: Record<string, string>, options: { base?: string; body?: Record<string, unknown>; config?: string; traceId?: string } = {}) {
  const headers: Record<string, string> = {
    ...json,
    'x-gateway-api-key': env().adminKey,
    'x-gateway-config': options.config ?? config(),
    'x-gateway-metadata': JSON.stringify(metadata),
  };
  if (options.traceId) headers['x-gateway-trace-id'] = options.traceId;
  const response = await fetch(`${options.base ?? env().gatewayUrl}/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello rate limits' }], ...options.body }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

/** A burst that straddles a minute boundary meets two windows of an rpm policy; start it well inside one. */
/** Starts a test early in a minute: on a loaded machine (CI runs three suites on 2 cores) a few requests can take seconds. */
async function clearOfMinuteBoundary(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

const upstreamCalls = (content: string) => upstream.requests.filter((request) => JSON.stringify(request.json ?? '').includes(content)).length;

// Policies reach a process's memory within its cache TTL: a sentinel policy created after all the
// others shows, once its headers appear on both processes, that every policy of this file applies.
const policies: Record<string, string> = {};
const pending: Array<[string, Record<string, unknown>]> = [
  ['enforced', taggedPolicy(tag('enforced'), { value: 3 })],
  ['rollover', taggedPolicy(tag('rollover'), { value: 5 })],
  ['exact', taggedPolicy(tag('exact'), { value: 50 })],
  ['perUser', { conditions: [{ key: 'metadata.rl', value: tag('users') }], group_by: [{ key: 'metadata._user' }], type: 'requests', unit: 'rph', value: 7 }],
  ['tokens', taggedPolicy(tag('tokens'), { type: 'tokens', value: 10 })],
  ['model', { conditions: [{ key: 'model', value: tag('model') }], group_by: [{ key: 'model' }], type: 'requests', unit: 'rpd', value: 1 }],
  ['passthrough', taggedPolicy(tag('passthrough'), { value: 1 })],
  ['sentinel', taggedPolicy(tag('sentinel'), { value: 1_000_000 })],
];

/** A pass-through request (GET /v1/models) to the shared gateway, or to `base`. */
const passthrough = (metadata: Record<string, string>, base = env().gatewayUrl) =>
  fetch(`${base}/models`, {
    headers: {
      'x-gateway-api-key': env().adminKey,
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-rl',
      'x-gateway-custom-host': `${upstream.url}/v1`,
      'x-gateway-metadata': JSON.stringify(metadata),
    },
  });

// Each function holds its own policy cache (as each Lambda function does), so both the chat and
// the pass-through function must show the sentinel.
async function untilApplied(base: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [answer, passed] = await Promise.all([chat({ rl: tag('sentinel') }, { base }), passthrough({ rl: tag('sentinel') }, base)]);
    await passed.arrayBuffer();
    if (answer.headers.get('x-ratelimit-limit-requests') === '1000000' && passed.headers.get('x-ratelimit-limit-requests') === '1000000') return;
    if (Date.now() > deadline) throw new Error('policies did not apply within 15 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  second = await spawnSharedGateway();
  for (const [name, body] of pending) {
    const created = await createPolicy(body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    policies[name] = created.body.id;
  }
  await Promise.all([untilApplied(env().gatewayUrl), untilApplied(second.url)]);
}, 60_000);
afterAll(async () => {
  await second?.stop();
  await upstream?.close();
});

describe('rate-limit policy routes', () => {
  it('creates, reads, lists with filters and pages, updates and archives', async () => {
    const created = await createPolicy({ ...taggedPolicy(tag('routes'), { value: 9, unit: 'rph' }), name: 'routes test' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), object: 'policy_usage_limits' });
    const id = created.body.id;
    const read = await (await gatewayFetch(`/policies/rate-limits/${id}`)).json();
    expect(read).toMatchObject({
      id,
      type: 'requests',
      unit: 'rph',
      value: 9,
      status: 'active',
      name: 'routes test',
      conditions: [{ key: 'metadata.rl', value: tag('routes') }],
      group_by: [{ key: 'metadata.rl' }],
    });
    expect(new Date(read.created_at).toISOString()).toBe(read.created_at);

    const list = await (await gatewayFetch('/policies/rate-limits?unit=rph&type=requests&page_size=100')).json();
    expect(list.object).toBe('list');
    expect(list.data.map((policy: any) => policy.id)).toContain(id);
    expect(list.data.every((policy: any) => policy.unit === 'rph' && policy.type === 'requests')).toBe(true);
    expect(list.total).toBe(list.data.length);
    const first = await (await gatewayFetch('/policies/rate-limits?page_size=2&current_page=0')).json();
    const next = await (await gatewayFetch('/policies/rate-limits?page_size=2&current_page=1')).json();
    expect(first.data).toHaveLength(2);
    expect(first.total).toBeGreaterThanOrEqual(pending.length);
    expect(next.data.map((policy: any) => policy.id)).not.toContain(first.data[0].id);

    const updated = await gatewayFetch(`/policies/rate-limits/${id}`, { method: 'PUT', headers: json, body: JSON.stringify({ value: 12, name: 'renamed' }) });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({ id, value: 12, name: 'renamed', status: 'active' });
    const archived = await gatewayFetch(`/policies/rate-limits/${id}`, { method: 'PUT', headers: json, body: JSON.stringify({ status: 'archived' }) });
    expect((await archived.json()).status).toBe('archived');
    const active = await (await gatewayFetch('/policies/rate-limits?page_size=1000')).json();
    expect(active.data.map((policy: any) => policy.id)).not.toContain(id);
    const archivedList = await (await gatewayFetch('/policies/rate-limits?status=archived&page_size=1000')).json();
    expect(archivedList.data.map((policy: any) => policy.id)).toContain(id);

    const another = await createPolicy(taggedPolicy(tag('deleted'), { value: 1 }));
    const deleted = await gatewayFetch(`/policies/rate-limits/${another.body.id}`, { method: 'DELETE' });
    expect((await deleted.json()).status).toBe('archived');
  });

  it.each([
    [{ conditions: [] }, 'conditions'],
    [{ conditions: [{ key: 'colour', value: 'red' }] }, 'conditions[0].key'],
    [{ group_by: [{ key: 'metadata.' }] }, 'group_by[0].key'],
    [{ unit: 'rps' }, 'unit'],
    [{ type: 'cost' }, 'type'],
    [{ value: 0 }, 'value'],
    [{ value: 2.5 }, 'value'],
    [{ name: 'x'.repeat(256) }, 'name'],
    [{ conditions: [{ key: 'model', value: 3 }] }, 'conditions[0].value'],
  ])('refuses %j with a 400 naming %s', async (change, param) => {
    const created = await createPolicy({ ...taggedPolicy(tag('invalid'), { value: 1 }), ...change });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ param, code: 'invalid_rate_limit_policy' });
  });

  it('takes up to 100 condition values, and says so when given 101', async () => {
    const values = (count: number) => Array.from({ length: count }, (_, index) => `m${index}`);
    const accepted = await createPolicy({ ...taggedPolicy(tag('values'), { value: 1 }), conditions: [{ key: 'model', value: values(100) }] });
    expect(accepted.status).toBe(200);
    const refused = await createPolicy({ ...taggedPolicy(tag('values'), { value: 1 }), conditions: [{ key: 'model', value: values(101) }] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param: 'conditions[0].value', code: 'invalid_rate_limit_policy' });
    expect(refused.body.error.message).toContain('1 to 100 strings');
  });

  it('refuses a PUT that names another workspace or organisation, and takes its own workspace as read', async () => {
    const created = await createPolicy(taggedPolicy(tag('unmoved'), { value: 4 }));
    const id = created.body.id;
    const read = await (await gatewayFetch(`/policies/rate-limits/${id}`)).json();
    for (const [field, value] of [
      ['workspace_id', `ws_elsewhere${run}`],
      ['organisation_id', 'org_elsewhere'],
    ]) {
      const moved = await gatewayFetch(`/policies/rate-limits/${id}`, { method: 'PUT', headers: json, body: JSON.stringify({ value: 5, [field]: value }) });
      expect(moved.status).toBe(400);
      expect((await moved.json()).error).toMatchObject({
        param: field,
        code: 'invalid_rate_limit_policy',
        message: expect.stringContaining('cannot be changed'),
      });
    }
    expect((await (await gatewayFetch(`/policies/rate-limits/${id}`)).json()).value).toBe(4);
    const roundTrip = await gatewayFetch(`/policies/rate-limits/${id}`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ value: 6, workspace_id: read.workspace_id, organisation_id: read.organisation_id }),
    });
    expect(roundTrip.status).toBe(200);
    expect(await roundTrip.json()).toMatchObject({ id, value: 6, workspace_id: read.workspace_id });
  });

  it("keeps another workspace's policies out of sight, and refuses naming a workspace that is not the key's", async () => {
    const otherKey = await createWorkspaceAdminKey(`ws_rl${run}`);
    const theirs = await createPolicy(taggedPolicy(tag('theirs'), { value: 1 }), otherKey);
    expect(theirs.status).toBe(200);
    expect((await gatewayFetch(`/policies/rate-limits/${theirs.body.id}`)).status).toBe(404);
    const ours = await (await gatewayFetch('/policies/rate-limits?page_size=1000')).json();
    expect(ours.data.map((policy: any) => policy.id)).not.toContain(theirs.body.id);
    const put = await gatewayFetch(`/policies/rate-limits/${theirs.body.id}`, { method: 'PUT', headers: json, body: JSON.stringify({ value: 5 }) });
    expect(put.status).toBe(404);
    const elsewhere = await createPolicy({ ...taggedPolicy(tag('elsewhere'), { value: 1 }), workspace_id: 'ws_someoneelse' });
    expect(elsewhere.status).toBe(403);
  });
});

describe('rate limits on inference', () => {
  it('answers with x-ratelimit headers, then 429 with retry-after once the window is full, without calling the provider', async () => {
    await clearOfMinuteBoundary();
    const content = `limited ${run}`;
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await chat({ rl: tag('enforced') }, { body: { messages: [{ role: 'user', content }] } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-ratelimit-limit-requests')).toBe('3');
      // A request in a window's first moments sees the whole minute left, which OpenAI's form writes 1m0s.
      expect(answer.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+s|1m0s)$/);
      remaining.push(answer.headers.get('x-ratelimit-remaining-requests')!);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const traceId = `rl-refused-${run}`;
    const refused = await chat({ rl: tag('enforced') }, { body: { messages: [{ role: 'user', content }] }, traceId });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    expect(refused.body.error.message).toContain(policies.enforced);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('3');
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(upstreamCalls(content)).toBe(3);
    const [record] = await waitForLogs(traceId);
    expect(record).toMatchObject({ status: 429, rate_limit_policy_id: policies.enforced });
  }, 45_000);

  it('counts each window apart: a full previous window does not limit this one, a full current one does', async () => {
    const dynamo = stateTableClient();
    const bucket = bucketOfValue(tag('rollover'));
    const windowStart = Math.floor(Date.now() / 60_000) * 60_000;
    const counter = (start: number, n: number) =>
      new PutItemCommand({
        TableName: stateTable,
        Item: marshall({ pk: `RL#${policies.rollover}#${bucket}`, sk: `W#${start}`, n, expiresAt: Math.floor(start / 1000) + 7200 }),
      });
    await dynamo.send(counter(windowStart - 60_000, 5));
    expect((await chat({ rl: tag('rollover') })).status).toBe(200);
    // The window this request fell in is now as full as the previous one.
    await dynamo.send(counter(windowStart, 5));
    const refused = await chat({ rl: tag('rollover') });
    // A minute boundary between the two requests leaves the new window empty: then it passes.
    expect(Math.floor(Date.now() / 60_000) * 60_000 === windowStart ? refused.status : 429).toBe(429);
    dynamo.destroy();
  });

  it('admits exactly the limit of 200 concurrent requests over two gateway processes', async () => {
    await clearOfMinuteBoundary();
    const bases = [env().gatewayUrl, second.url];
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => chat({ rl: tag('exact') }, { base: bases[i % 2] })));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(50);
    expect(statuses.filter((status) => status === 429)).toHaveLength(150);
  }, 60_000);

  it('gives every metadata._user its own limit, exactly, over two processes', async () => {
    const bases = [env().gatewayUrl, second.url];
    const users = ['ana', 'bo', 'cy', 'di'];
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        chat({ rl: tag('users'), _user: users[i % 4]! }, { base: bases[Math.floor(i / 4) % 2] }).then((answer) => ({
          user: users[i % 4],
          status: answer.status,
        })),
      ),
    );
    for (const user of users)
      expect(
        answers.filter((answer) => answer.user === user && answer.status === 200),
        user,
      ).toHaveLength(7);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(120 - 28);
  }, 60_000);

  it("counts a streamed answer's tokens after it ends, and refuses the next request once the window's total is reached", async () => {
    await clearOfMinuteBoundary();
    const streamed = await chat({ rl: tag('tokens') }, { body: { stream: true, stream_options: { include_usage: true } } });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('x-ratelimit-limit-tokens')).toBe('10');
    expect(streamed.headers.get('x-ratelimit-remaining-tokens')).toBe('10');
    expect(streamed.text).toContain('"usage"');
    const deadline = Date.now() + 1_000;
    let next = await chat({ rl: tag('tokens') });
    while (next.status === 200 && Date.now() < deadline) next = await chat({ rl: tag('tokens') });
    expect(next.status).toBe(429);
    expect(next.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(next.body.error.code).toBe('rate_limit_exceeded');
  }, 45_000);

  it('limits a model per target attempt, after override_params', async () => {
    const overridden = config({ override_params: { model: tag('model') } });
    expect((await chat({}, { config: overridden })).status).toBe(200);
    const refused = await chat({}, { config: overridden });
    expect(refused.status).toBe(429);
    expect(refused.body.error.message).toContain(policies.model);
    // The same model in the body but another after the override: not this policy's.
    expect((await chat({}, { body: { model: tag('model') }, config: config({ override_params: { model: 'gpt-4o-mini' } }) })).status).toBe(200);
  }, 45_000);

  it('limits pass-through requests too', async () => {
    await clearOfMinuteBoundary();
    const call = () => passthrough({ rl: tag('passthrough') });
    expect((await call()).status).toBe(200);
    const refused = await call();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('1');
  }, 45_000);
});
