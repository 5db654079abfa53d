/**
 * Token budgets and token rate limits under concurrent requests, through the running gateway: each
 * request reserves its estimate before the provider is called and settles it with its real usage,
 * so a burst passes a limit by at most one request's usage, and a request that fails or whose
 * stream is cut gives its reservation back.
 */
import { type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sliceMs } from '../../lib/store/reserved-counters';
import { ownPath, startFakeUpstream, type FakeStep, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch } from '../support/gateway-client';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';
import { pollUntil } from '../support/poll';
import { bucketOfValue, stateTableClient } from '../support/state-table';

const json = { 'content-type': 'application/json' };
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const tag = (name: string) => `${name}-${run}`;

let upstream: FakeUpstream;
let dynamo: DynamoDBClient;
connectToGatewayStore();

/** The usage every scripted answer reports: 15 tokens, as in the overshoot this guards against. */
const answerTokens = 15;
const answer = (delayMs: number): FakeStep => ({
  status: 200,
  delayMs,
  json: {
    id: 'chatcmpl-burst',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: answerTokens },
  },
});

async function createPolicy(path: 'usage-limits' | 'rate-limits', body: Record<string, unknown>) {
  const response = await gatewayFetch(`/policies/${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
  const created = await response.json();
  expect(response.status, JSON.stringify(created)).toBe(200);
  return created as { id: string };
}

const readBudget = async (id: string) => (await gatewayFetch(`/policies/usage-limits/${id}`)).json();

/** One chat request tagged `metadata.burst`, to a fake upstream path of its own. */
async function chat(burst: string, customHost: string, body: Record<string, unknown> = {}) {
  const response = await fetch(`${env().gatewayUrl}/chat/completions`, {
    method: 'POST',
    headers: {
      ...json,
      'x-gateway-api-key': env().adminKey,
      'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk-burst', custom_host: customHost }),
      'x-gateway-metadata': JSON.stringify({ burst }),
    },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 12, ...body }),
  });
  // A cut stream ends the body with an error: what arrived before it is enough here.
  const text = await response.text().catch(() => '');
  return { status: response.status, headers: response.headers, text, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

const tagged = (value: string) => ({ name: value, conditions: [{ key: 'metadata.burst', value }], group_by: [{ key: 'metadata.burst' }] });

/** A bucket's counter item as the gateway keeps it (`n`: settled usage plus reservations under way). */
function usageKey(policyId: string, bucketValue: string, periodStart = 0) {
  const bucket = bucketOfValue(bucketValue);
  return { pk: `UL#${policyId}#P#${periodStart}`, sk: `B#${bucket}` };
}

/** The counter's `n`: settled usage plus every reservation under way. */
async function counterTotal(policyId: string, bucketValue: string): Promise<number> {
  const { Item } = await dynamo.send(new GetItemCommand({ TableName: stateTable, Key: marshall(usageKey(policyId, bucketValue)), ConsistentRead: true }));
  return Number(Item?.n?.N ?? 0);
}

const budgets: Record<string, { id: string }> = {};
const policies: Record<string, { id: string }> = {};

beforeAll(async () => {
  upstream = await startFakeUpstream();
  dynamo = stateTableClient();
  budgets.burst = await createPolicy('usage-limits', { ...tagged(tag('burst')), type: 'tokens', credit_limit: 100 });
  budgets.failed = await createPolicy('usage-limits', { ...tagged(tag('failed')), type: 'tokens', credit_limit: 100 });
  budgets.leaked = await createPolicy('usage-limits', { ...tagged(tag('leaked')), type: 'tokens', credit_limit: 100 });
  budgets.cost = await createPolicy('usage-limits', { ...tagged(tag('cost')), type: 'cost', credit_limit: 0.000_01 });
  policies.burst = await createPolicy('rate-limits', { ...tagged(tag('rl-burst')), type: 'tokens', unit: 'rph', value: 100 });
  // A budget created last and already spent: once it refuses, every policy above applies.
  budgets.sentinel = await createPolicy('usage-limits', { ...tagged(tag('sentinel')), type: 'tokens', credit_limit: 1 });
  await dynamo.send(new PutItemCommand({ TableName: stateTable, Item: marshall({ ...usageKey(budgets.sentinel.id, tag('sentinel')), n: 1 }) }));
  const sentinel = ownPath(upstream, 'burst', 'sentinel');
  const applied = await pollUntil(
    () => chat(tag('sentinel'), sentinel.custom_host),
    (answer) => answer.status === 412,
    15_000,
  );
  expect(applied.status).toBe(412);
}, 60_000);
afterAll(async () => {
  await upstream?.close();
});

describe('token budgets under concurrent requests', () => {
  it('passes a 100-token budget by at most one request at c=50, then refuses once it is used up', async () => {
    const path = ownPath(upstream, 'burst', 'budget');
    // Slow answers: every request of the burst is under way before the first one is answered.
    upstream.script(
      path.prefix,
      Array.from({ length: 60 }, () => answer(400)),
    );
    const answers = await Promise.all(Array.from({ length: 50 }, () => chat(tag('burst'), path.custom_host)));
    const admitted = answers.filter((answer) => answer.status === 200).length;
    const refused = answers.filter((answer) => answer.status === 412);
    expect(admitted + refused.length).toBe(50);
    expect(admitted).toBeGreaterThan(0);
    expect(path.calls()).toBe(admitted);
    // The fix's bound: every admitted request found usage plus reservations below the limit.
    expect(admitted * answerTokens).toBeLessThanOrEqual(100 + answerTokens);
    expect(refused[0]!.body.error).toMatchObject({ code: 'budget_exceeded' });
    expect(refused[0]!.body.error.message).toContain('under way');

    // Settled, the reservations are gone: the budget shows the usage of the admitted requests only.
    const settled = await pollUntil(
      () => readBudget(budgets.burst.id),
      (budget) => budget.current_usage === admitted * answerTokens,
    );
    expect(settled.current_usage).toBe(admitted * answerTokens);

    // One at a time, requests go on until the usage reaches the limit, and no further. Until the
    // last admitted request's reservation is released (just after its answer) a refusal says
    // requests are under way; once it is, the next request is admitted while the usage is below
    // the limit, and refused as used up when it is not.
    let next = await chat(tag('burst'), path.custom_host);
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
      if (next.status === 412 && !next.body.error.message.includes('under way')) break;
      if (next.status === 412) await new Promise((resolve) => setTimeout(resolve, 50));
      else expect(next.status).toBe(200);
      next = await chat(tag('burst'), path.custom_host);
    }
    expect(next.status).toBe(412);
    expect(next.body.error.message).toContain('has been used up');
    const final = await pollUntil(
      () => readBudget(budgets.burst.id),
      (budget) => budget.current_usage >= 100,
    );
    expect(final.current_usage).toBeGreaterThanOrEqual(100);
    expect(final.current_usage).toBeLessThanOrEqual(100 + answerTokens);
    expect(path.calls() * answerTokens).toBe(final.current_usage);
  }, 60_000);

  it('gives back the reservations of requests that failed or whose stream was cut', async () => {
    // Each reserves about 70 tokens (its prompt and max_tokens 50): two of them left behind would hold the whole budget.
    const failed = ownPath(upstream, 'burst', 'failed');
    upstream.script(
      failed.prefix,
      Array.from({ length: 3 }, () => ({ status: 500, delayMs: 300, json: { error: { message: 'down', type: 'server_error' } } })),
    );
    const errors = await Promise.all(Array.from({ length: 3 }, () => chat(tag('failed'), failed.custom_host, { max_tokens: 50 })));
    expect(errors.map((answer) => answer.status).sort()).toEqual([412, 500, 500]);

    const cut = ownPath(upstream, 'burst', 'cut');
    const chunk = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"par"}}]}';
    upstream.script(
      cut.prefix,
      Array.from({ length: 3 }, () => ({ sse: [chunk, chunk], delayMs: 300, failAfter: 1 })),
    );
    // The failed requests' reservations are released once their log records are complete, just after their answers.
    expect(
      await pollUntil(
        () => counterTotal(budgets.failed.id, tag('failed')),
        (total) => total === 0,
      ),
    ).toBe(0);
    const streams = await Promise.all(Array.from({ length: 3 }, () => chat(tag('failed'), cut.custom_host, { max_tokens: 50, stream: true })));
    const cutStreams = streams.filter((answer) => answer.status === 200);
    expect(cutStreams.length + streams.filter((answer) => answer.status === 412).length).toBe(3);
    // Two reservations of about 70 fill the budget: a third request under way with them is refused.
    expect(cutStreams.length).toBeGreaterThan(0);
    expect(cutStreams.length).toBeLessThanOrEqual(2);
    for (const answer of cutStreams) expect(answer.text).toContain('provider_stream_error');
    expect(
      await pollUntil(
        () => counterTotal(budgets.failed.id, tag('failed')),
        (total) => total === 0,
      ),
    ).toBe(0);

    const healthy = ownPath(upstream, 'burst', 'failed-after');
    upstream.script(healthy.prefix, [answer(0)]);
    const afterwards = await pollUntil(
      () => chat(tag('failed'), healthy.custom_host),
      (answer) => answer.status === 200,
    );
    expect(afterwards.status).toBe(200);
    const budget = await pollUntil(
      () => readBudget(budgets.failed.id),
      (found) => found.current_usage === answerTokens,
    );
    expect(budget.current_usage).toBe(answerTokens);
  }, 30_000);

  it('releases a reservation its request never settled once its quarter hour is stale', async () => {
    const path = ownPath(upstream, 'burst', 'leaked');
    upstream.script(path.prefix, [answer(0)]);
    // A process stopped mid-request an hour ago left 500 tokens reserved: the budget looks full.
    const staleSlice = Math.floor((Date.now() - 3_600_000) / sliceMs);
    await dynamo.send(
      new PutItemCommand({ TableName: stateTable, Item: marshall({ ...usageKey(budgets.leaked.id, tag('leaked')), n: 520, [`r${staleSlice}`]: 500 }) }),
    );
    const admitted = await chat(tag('leaked'), path.custom_host);
    expect(admitted.status).toBe(200);
    const budget = await pollUntil(
      () => readBudget(budgets.leaked.id),
      (found) => found.current_usage === 20 + answerTokens,
    );
    expect(budget.current_usage).toBe(20 + answerTokens);
  });

  it("prices a cost budget's reservation at the target's model: a burst passes it by at most one request", async () => {
    const path = ownPath(upstream, 'burst', 'cost');
    upstream.script(
      path.prefix,
      Array.from({ length: 20 }, () => answer(400)),
    );
    // gpt-4o-mini: 15 tokens cost $0.0000045 (10 in at $0.15/M, 5 out at $0.60/M); the budget is $0.00001.
    const answers = await Promise.all(Array.from({ length: 20 }, () => chat(tag('cost'), path.custom_host)));
    const admitted = answers.filter((answer) => answer.status === 200).length;
    expect(admitted).toBeGreaterThan(0);
    expect(admitted * 0.000_004_5).toBeLessThanOrEqual(0.000_01 + 0.000_004_5);
    expect(answers.filter((answer) => answer.status === 412).length).toBe(20 - admitted);
  }, 30_000);
});

describe('token rate limits under concurrent requests', () => {
  it('passes a 100-token window by at most one request at c=50, with what was left in the headers', async () => {
    // A burst across an hour's end would meet two windows.
    const intoHour = Date.now() % 3_600_000;
    if (intoHour > 3_590_000) await new Promise((resolve) => setTimeout(resolve, 3_600_000 - intoHour + 50));
    const path = ownPath(upstream, 'burst', 'rate');
    upstream.script(
      path.prefix,
      Array.from({ length: 50 }, () => answer(400)),
    );
    const answers = await Promise.all(Array.from({ length: 50 }, () => chat(tag('rl-burst'), path.custom_host)));
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(admitted.length + refused.length).toBe(50);
    expect(admitted.length).toBeGreaterThan(0);
    expect(admitted.length * answerTokens).toBeLessThanOrEqual(100 + answerTokens);
    expect(path.calls()).toBe(admitted.length);
    expect(refused[0]!.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(refused[0]!.body.error.code).toBe('rate_limit_exceeded');
    for (const answer of admitted) expect(Number(answer.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(0);
  }, 60_000);
});
