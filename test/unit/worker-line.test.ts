/**
 * The core as a batch worker calls it, over in-memory stores and a loopback provider: one line
 * under a token budget and a token rate limit, with exactly the calls a worker makes
 * (`inferenceRequest`, `inferenceContext`, `runInference`, read the answer, `finish`). It
 * completes, its tokens are counted on both, and its log record carries the caller and the line's id.
 */
import { describe, expect, it } from 'vitest';
import { inferenceRequest } from '../../lib/inference/inference-request';
import { memoryStores } from '../../lib/inference/memory-stores';
import { inferenceContext, runInference } from '../../lib/inference/run-inference';
import type { RequestLogRecord } from '../../lib/observability/request-log';
import { tokenCounter } from '../../lib/store/rate-counters';
import { usageCounter } from '../../lib/store/usage-counters';
import { useLoopbackUpstream } from '../support/loopback-upstream';

const loopback = useLoopbackUpstream();

const caller = { organisationId: 'org_worker', workspaceId: 'ws_worker' };
const everyRequest = { conditions: [], group_by: [] };

describe("a worker's line", () => {
  it('runs under a budget and a token policy with the calls a worker makes, and both count its tokens', async () => {
    const stores = memoryStores();
    stores.policies.saveBudget(caller.workspaceId, { name: 'batch', type: 'tokens', credit_limit: 1_000_000, ...everyRequest });
    stores.policies.saveRateLimit(caller.workspaceId, { type: 'tokens', unit: 'rph', value: 1_000_000, ...everyRequest });
    const saved = stores.configs.save(caller.workspaceId, { provider: 'openai', api_key: 'sk-line', custom_host: `${loopback.upstream.url}/worker/v1` });
    const records: RequestLogRecord[] = [];

    const request = inferenceRequest({
      kind: 'unified',
      operation: 'chat',
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'line one' }] },
      caller,
      metadata: { batch: 'batch_1' },
      options: { config: { kind: 'saved', ref: saved.id } },
    });
    const context = inferenceContext(request, { stores, logSink: (record) => records.push(record) });
    const result = await runInference(context);
    expect(result.outcome.ok).toBe(true);
    const answer = JSON.parse(String((result.outcome as { body: Buffer | string }).body));
    expect(answer.choices[0].message.content).toBe('echo: line one');
    await context.finish({ status: result.outcome.status, requestId: 'line-1' });

    const tokens = result.usage!.total_tokens;
    expect(tokens).toBeGreaterThan(0);
    expect(stores.counters.settled(usageCounter(context.budgets!.requestSlots[0]!.slot))).toBe(tokens);
    expect(stores.counters.settled(tokenCounter(context.rateLimits!.requestTokens[0]!.slot))).toBe(tokens);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      request_id: 'line-1',
      status: 200,
      organisation_id: caller.organisationId,
      workspace_id: caller.workspaceId,
      metadata: { batch: 'batch_1' },
      provider: 'openai',
      usage: { total_tokens: tokens },
    });
  });

  it("cannot name another workspace's saved config", async () => {
    const stores = memoryStores();
    const saved = stores.configs.save('ws_elsewhere', { provider: 'openai', api_key: 'sk-other', custom_host: `${loopback.upstream.url}/other/v1` });
    const request = inferenceRequest({
      kind: 'unified',
      operation: 'chat',
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      caller,
      options: { config: { kind: 'saved', ref: saved.id } },
    });
    await expect(runInference(inferenceContext(request, { stores, logSink: () => undefined }))).rejects.toMatchObject({
      status: 400,
      code: 'config_not_found',
    });
    expect(loopback.upstream.requests.filter((recorded) => recorded.path.startsWith('/other/'))).toEqual([]);
  });
});
