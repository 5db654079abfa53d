import { type DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodAt } from '../../lib/budgets/periods';
import { costOf, priceOf } from '../../lib/pricing/prices';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore, createWorkspaceAdminKey, stateTable } from '../support/gateway-store';
import { pollUntil } from '../support/poll';
import { bucketOfValue, stateTableClient } from '../support/state-table';

const json = { 'content-type': 'application/json' };
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const tag = (name: string) => `${name}-${run}`;

let upstream: FakeUpstream;
let dynamo: DynamoDBClient;
connectToGatewayStore();

async function createBudget(body: Record<string, unknown>, gatewayKey?: string) {
  const response = await gatewayFetch('/policies/usage-limits', {
    method: 'POST',
    headers: { ...json, ...(gatewayKey ? { 'x-gateway-api-key': gatewayKey } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const readBudget = async (id: string) => (await gatewayFetch(`/policies/usage-limits/${id}`)).json();

/** A budget selecting only requests whose `metadata.budget` is `value`, one bucket per value. */
const taggedBudget = (value: string, fields: Record<string, unknown>) => ({
  name: value,
  conditions: [{ key: 'metadata.budget', value }],
  group_by: [{ key: 'metadata.budget' }],
  type: 'tokens',
  credit_limit: 1000,
  ...fields,
});

const target = (extra: Record<string, unknown> = {}) => ({ provider: 'openai', api_key: 'sk-budget', custom_host: `${upstream.url}/v1`, ...extra });

async function chat(budget: string, options: { model?: string; traceId?: string; content?: string; config?: Record<string, unknown> } = {}) {
  const headers: Record<string, string> = {
    ...json,
    'x-gateway-api-key': env().adminKey,
    'x-gateway-config': JSON.stringify(options.config ?? target()),
    'x-gateway-metadata': JSON.stringify({ budget }),
  };
  if (options.traceId) headers['x-gateway-trace-id'] = options.traceId;
  const response = await fetch(`${env().gatewayUrl}/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: options.model ?? 'gpt-4o-mini', messages: [{ role: 'user', content: options.content ?? 'hello budgets' }] }),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

/** Writes a bucket's usage in one period, as the gateway would have counted it. */
async function writeUsage(policyId: string, bucketValue: string, periodStart: number, n: number, groupKey = 'metadata.budget'): Promise<void> {
  const bucket = bucketOfValue(bucketValue);
  await dynamo.send(
    new PutItemCommand({
      TableName: stateTable,
      Item: marshall({ pk: `UL#${policyId}#P#${periodStart}`, sk: `B#${bucket}`, n, group: { [groupKey]: bucketValue } }),
    }),
  );
}

const upstreamCalls = (content: string) => upstream.requests.filter((request) => JSON.stringify(request.json ?? '').includes(content)).length;

// Budgets reach a process's memory within its cache TTL; a sentinel budget created last and already
// spent shows, once it refuses, that every budget of this file applies.
const budgets: Record<string, any> = {};
const pending: Array<[string, Record<string, unknown>]> = [
  ['tokens', taggedBudget(tag('tokens'), { credit_limit: 30, periodic_reset: 'monthly' })],
  ['weekly', taggedBudget(tag('weekly'), { credit_limit: 100, periodic_reset: 'weekly' })],
  ['days', taggedBudget(tag('days'), { credit_limit: 100, periodic_reset_days: 3 })],
  ['cost', taggedBudget(tag('cost'), { type: 'cost', credit_limit: 5 })],
  ['unknownCost', taggedBudget(tag('unknown'), { type: 'cost', credit_limit: 5 })],
  ['alert', taggedBudget(tag('alert'), { credit_limit: 100_000, alert_threshold: 1 })],
  [
    'spentModel',
    { name: 'spent model', conditions: [{ key: 'model', value: tag('spent-model') }], group_by: [{ key: 'model' }], type: 'tokens', credit_limit: 10 },
  ],
  ['model', { name: 'per model', conditions: [{ key: 'model', value: tag('model') }], group_by: [{ key: 'model' }], type: 'tokens', credit_limit: 100_000 }],
  ['sentinel', taggedBudget(tag('sentinel'), { credit_limit: 1 })],
];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  dynamo = stateTableClient();
  for (const [name, body] of pending) {
    const created = await createBudget(body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    budgets[name] = created.body;
  }
  await writeUsage(budgets.sentinel.id, tag('sentinel'), 0, 1);
  const applied = await pollUntil(
    () => chat(tag('sentinel')),
    (answer) => answer.status === 412,
    15_000,
  );
  expect(applied.status).toBe(412);
}, 60_000);
afterAll(async () => {
  await upstream?.close();
});

describe('usage-limit policy routes', () => {
  it('creates, reads, lists, updates and archives, with current usage and the next reset', async () => {
    const created = await createBudget(taggedBudget(tag('routes'), { type: 'cost', credit_limit: 12.5, alert_threshold: 10, periodic_reset: 'monthly' }));
    expect(created.status).toBe(200);
    const now = new Date();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'policy_usage_limits',
      type: 'cost',
      credit_limit: 12.5,
      alert_threshold: 10,
      periodic_reset: 'monthly',
      periodic_reset_days: null,
      status: 'active',
      current_usage: 0,
      usage: [],
      next_usage_reset_at: nextMonth,
    });
    const id = created.body.id;
    expect(await readBudget(id)).toMatchObject({ id, name: tag('routes'), conditions: [{ key: 'metadata.budget', value: tag('routes') }] });

    const list = await (await gatewayFetch('/policies/usage-limits?type=cost&page_size=1000')).json();
    expect(list.object).toBe('list');
    expect(list.data.map((budget: any) => budget.id)).toContain(id);
    expect(list.data.every((budget: any) => budget.type === 'cost')).toBe(true);
    expect(list.total).toBe(list.data.length);

    const updated = await gatewayFetch(`/policies/usage-limits/${id}`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ credit_limit: 20, name: 'renamed' }),
    });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({ id, credit_limit: 20, name: 'renamed', status: 'active' });
    const tooLow = await gatewayFetch(`/policies/usage-limits/${id}`, { method: 'PUT', headers: json, body: JSON.stringify({ credit_limit: 5 }) });
    expect(tooLow.status).toBe(400);
    expect((await tooLow.json()).error.param).toBe('alert_threshold');

    const deleted = await gatewayFetch(`/policies/usage-limits/${id}`, { method: 'DELETE' });
    expect((await deleted.json()).status).toBe('archived');
    const active = await (await gatewayFetch('/policies/usage-limits?page_size=1000')).json();
    expect(active.data.map((budget: any) => budget.id)).not.toContain(id);
    const archived = await (await gatewayFetch('/policies/usage-limits?status=archived&page_size=1000')).json();
    expect(archived.data.map((budget: any) => budget.id)).toContain(id);
  });

  it.each([
    [{ periodic_reset: 'weekly', periodic_reset_days: 7 }, 'periodic_reset_days'],
    [{ periodic_reset_days: 0 }, 'periodic_reset_days'],
    [{ periodic_reset_days: 366 }, 'periodic_reset_days'],
    [{ periodic_reset: 'daily' }, 'periodic_reset'],
    [{ type: 'requests' }, 'type'],
    [{ credit_limit: 0 }, 'credit_limit'],
    [{ credit_limit: 2.5 }, 'credit_limit'],
    [{ alert_threshold: 2000 }, 'alert_threshold'],
    [{ name: '' }, 'name'],
    [{ conditions: [{ key: 'colour', value: 'red' }] }, 'conditions[0].key'],
    [{ group_by: [] }, 'group_by'],
  ])('refuses %j with a 400 naming %s', async (change, param) => {
    const created = await createBudget({ ...taggedBudget(tag('invalid'), {}), ...change });
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ param, code: 'invalid_usage_limit_policy' });
  });

  it('refuses a PUT that names another workspace, and takes its own workspace as read', async () => {
    const created = await createBudget(taggedBudget(tag('unmoved'), { credit_limit: 40 }));
    const id = created.body.id;
    const moved = await gatewayFetch(`/policies/usage-limits/${id}`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ credit_limit: 50, workspace_id: `ws_elsewhere${run}` }),
    });
    expect(moved.status).toBe(400);
    expect((await moved.json()).error).toMatchObject({
      param: 'workspace_id',
      code: 'invalid_usage_limit_policy',
      message: expect.stringContaining('cannot be changed'),
    });
    const read = await readBudget(id);
    expect(read.credit_limit).toBe(40);
    const roundTrip = await gatewayFetch(`/policies/usage-limits/${id}`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ credit_limit: 60, workspace_id: read.workspace_id }),
    });
    expect(roundTrip.status).toBe(200);
    expect(await roundTrip.json()).toMatchObject({ id, credit_limit: 60, workspace_id: read.workspace_id });
  });

  it('names the limit of 100 condition values', async () => {
    const refused = await createBudget({
      ...taggedBudget(tag('values'), {}),
      conditions: [{ key: 'model', value: Array.from({ length: 101 }, (_, index) => `m${index}`) }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ param: 'conditions[0].value', code: 'invalid_usage_limit_policy' });
    expect(refused.body.error.message).toContain('1 to 100 strings');
  });

  it("keeps another workspace's budgets out of sight", async () => {
    const otherKey = await createWorkspaceAdminKey(`ws_ul${run}`);
    const theirs = await createBudget(taggedBudget(tag('theirs'), {}), otherKey);
    expect(theirs.status).toBe(200);
    expect((await gatewayFetch(`/policies/usage-limits/${theirs.body.id}`)).status).toBe(404);
    const ours = await (await gatewayFetch('/policies/usage-limits?page_size=1000')).json();
    expect(ours.data.map((budget: any) => budget.id)).not.toContain(theirs.body.id);
    expect(
      (await gatewayFetch(`/policies/usage-limits/${theirs.body.id}`, { method: 'PUT', headers: json, body: JSON.stringify({ credit_limit: 5 }) })).status,
    ).toBe(404);
    expect((await gatewayFetch(`/policies/usage-limits/${theirs.body.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await createBudget({ ...taggedBudget(tag('elsewhere'), {}), workspace_id: 'ws_someoneelse' })).status).toBe(403);
  });
});

describe('budgets on inference', () => {
  it('counts tokens after each answer, then refuses with 412 budget_exceeded without calling the provider', async () => {
    const content = `budget tokens ${run}`;
    let answer = await chat(tag('tokens'), { content });
    expect(answer.status).toBe(200);
    for (let i = 0; i < 20 && answer.status === 200; i++) {
      await pollUntil(
        () => readBudget(budgets.tokens.id),
        (budget) => budget.current_usage > 0,
      );
      answer = await chat(tag('tokens'), { content });
    }
    expect(answer.status).toBe(412);
    expect(answer.body.error).toMatchObject({ code: 'budget_exceeded' });
    expect(answer.body.error.message).toContain(budgets.tokens.id);
    const calls = upstreamCalls(content);
    const traceId = `budget-refused-${run}`;
    expect((await chat(tag('tokens'), { content, traceId })).status).toBe(412);
    expect(upstreamCalls(content)).toBe(calls);
    const [record] = await waitForLogs(traceId);
    expect(record).toMatchObject({ status: 412, usage_limit_policy_id: budgets.tokens.id, cost: 0 });
    const budget = await readBudget(budgets.tokens.id);
    expect(budget.current_usage).toBeGreaterThanOrEqual(30);
    expect(budget.usage[0]).toMatchObject({ group: { 'metadata.budget': tag('tokens') }, exhausted: true });
  });

  it('starts a weekly budget afresh on Monday: last week spent does not refuse, this week spent does', async () => {
    const { start } = periodAt({ periodic_reset: 'weekly', created_at: 0 }, Date.now());
    expect(new Date(start).getUTCDay()).toBe(1);
    expect(budgets.weekly.next_usage_reset_at).toBe(new Date(start + 7 * 86_400_000).toISOString());
    await writeUsage(budgets.weekly.id, tag('weekly'), start - 7 * 86_400_000, 100);
    expect((await chat(tag('weekly'))).status).toBe(200);
    await writeUsage(budgets.weekly.id, tag('weekly'), start, 100);
    expect((await chat(tag('weekly'))).status).toBe(412);
  });

  it('counts N-day periods from the day the budget was created', async () => {
    const created = Date.parse(budgets.days.created_at);
    const { start, end } = periodAt({ periodic_reset_days: 3, created_at: created }, Date.now());
    expect(start).toBe(Math.floor(created / 86_400_000) * 86_400_000);
    expect(budgets.days.next_usage_reset_at).toBe(new Date(end!).toISOString());
    await writeUsage(budgets.days.id, tag('days'), start - 3 * 86_400_000, 100);
    expect((await chat(tag('days'))).status).toBe(200);
    await writeUsage(budgets.days.id, tag('days'), start, 100);
    expect((await chat(tag('days'))).status).toBe(412);
  });

  it("puts the pricing table's cost on the log record, and counts it in a cost budget", async () => {
    const traceId = `budget-cost-${run}`;
    expect((await chat(tag('cost'), { traceId })).status).toBe(200);
    const [record] = await waitForLogs(traceId);
    expect(record.usage.total_tokens).toBeGreaterThan(0);
    const expected = costOf(priceOf('openai', 'gpt-4o-mini'), record.usage)!;
    expect(expected).toBeGreaterThan(0);
    expect(record.cost).toBeCloseTo(expected, 9);
    const budget = await pollUntil(
      () => readBudget(budgets.cost.id),
      (found) => found.current_usage > 0,
    );
    expect(budget.current_usage).toBeCloseTo(expected, 9);
  });

  it('leaves the cost of an unknown model null, never a guess, and a cost budget counts 0', async () => {
    const traceId = `budget-unknown-${run}`;
    expect((await chat(tag('unknown'), { traceId, model: `no-such-model-${run}` })).status).toBe(200);
    const [record] = await waitForLogs(traceId);
    expect(record.usage.total_tokens).toBeGreaterThan(0);
    expect(record.cost).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await readBudget(budgets.unknownCost.id)).toMatchObject({ current_usage: 0, usage: [] });
  });

  it('raises the alert once per period when usage crosses alert_threshold', async () => {
    expect((await chat(tag('alert'))).status).toBe(200);
    const first = await pollUntil(
      () => readBudget(budgets.alert.id),
      (budget) => budget.usage[0]?.alerted_at,
    );
    const alertedAt = first.usage[0].alerted_at;
    expect(alertedAt).toEqual(expect.any(String));
    expect((await chat(tag('alert'))).status).toBe(200);
    const second = await pollUntil(
      () => readBudget(budgets.alert.id),
      (budget) => budget.current_usage > first.current_usage,
    );
    expect(second.current_usage).toBeGreaterThan(first.current_usage);
    expect(second.usage[0].alerted_at).toBe(alertedAt);
  });

  it('checks a budget on the model per target attempt, after override_params: a fallback routes around a spent one', async () => {
    await writeUsage(budgets.spentModel.id, tag('spent-model'), 0, 10, 'model');
    const spent = target({ override_params: { model: tag('spent-model') } });
    const refused = await chat(tag('none'), { config: spent });
    expect(refused.status).toBe(412);
    expect(refused.body.error).toMatchObject({ code: 'budget_exceeded' });
    expect(refused.body.error.message).toContain(budgets.spentModel.id);
    // The same model named in the body but overridden by the target: not this budget's.
    expect((await chat(tag('none'), { model: tag('spent-model'), config: target({ override_params: { model: 'gpt-4o-mini' } }) })).status).toBe(200);

    const content = `budget fallback ${run}`;
    const routed = await chat(tag('none'), {
      content,
      config: { strategy: { mode: 'fallback', on_status_codes: [412] }, targets: [spent, target({ override_params: { model: tag('model') } })] },
    });
    expect(routed.status).toBe(200);
    const sent = upstream.requests
      .filter((request) => JSON.stringify(request.json ?? '').includes(content))
      .map((request) => (request.json as { model: string }).model);
    expect(sent).toEqual([tag('model')]);
    // The attempt that answered is the one whose budget counts the spend, under its model's bucket.
    const counted = await pollUntil(
      () => readBudget(budgets.model.id),
      (budget) => budget.current_usage > 0,
    );
    expect(counted.current_usage).toBeGreaterThan(0);
    expect(counted.usage).toEqual([expect.objectContaining({ group: { model: tag('model') }, exhausted: false })]);
    expect((await readBudget(budgets.spentModel.id)).current_usage).toBe(10);
  });
});
