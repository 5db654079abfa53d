import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../lib/core/errors';
import { bucketValue, latencyBucket, sketchQuantile } from '../../lib/observability/log-dimensions';
import { groupsQuery, logListQuery, usedRange } from '../../lib/observability/log-queries';

const now = Date.parse('2026-11-27T12:34:56.789Z');

function refusal(run: () => unknown): { status: number; param: string | null } {
  try {
    run();
  } catch (error) {
    const { status, param } = error as GatewayError;
    return { status, param };
  }
  throw new Error('not refused');
}

describe('the latency sketch', () => {
  it('answers every value within 1% of itself, from 0.01 ms to an hour', () => {
    for (let value = 0.01; value < 3_600_000; value *= 1.037) {
      expect(Math.abs(bucketValue(latencyBucket(value)) - value) / value).toBeLessThanOrEqual(0.01);
    }
    expect([latencyBucket(0), bucketValue('z')]).toEqual(['z', 0]);
  });

  it('answers the nearest-rank quantile of merged counts', () => {
    const histogram: Record<string, number> = {};
    const values = Array.from({ length: 1000 }, (_, n) => 1 + n * 3.7);
    for (const value of values) histogram[latencyBucket(value)] = (histogram[latencyBucket(value)] ?? 0) + 1;
    for (const q of [0.5, 0.95, 0.99]) {
      const truth = values[Math.ceil(q * values.length) - 1]!;
      expect(Math.abs(sketchQuantile(histogram, q)! - truth) / truth).toBeLessThanOrEqual(0.01);
    }
    expect(sketchQuantile({}, 0.99)).toBeNull();
  });
});

describe('log list queries', () => {
  it('reads the most selective filter’s partition and checks the others after the read', () => {
    const query = logListQuery({ model: 'gpt-4o', 'metadata._user': 'ana', status_code: '429' }, now);
    expect(query.index).toEqual({ dimension: 'meta._user', value: 'ana' });
    expect(query.conditions).toEqual([
      { path: ['f_model'], value: 'gpt-4o' },
      { path: ['f_status'], value: 429 },
    ]);
    expect(logListQuery({ status_code: '429' }, now)).toMatchObject({
      index: { dimension: 'status_class', value: '4xx' },
      conditions: [{ path: ['f_status'], value: 429 }],
    });
    expect(logListQuery({}, now)).toMatchObject({ index: undefined, conditions: [], limit: 20 });
  });

  it('reads successes from the workspace’s own partition, which holds mostly them', () => {
    expect(logListQuery({ status_code: '2xx' }, now)).toMatchObject({ index: undefined, conditions: [{ path: ['f_status_class'], value: '2xx' }] });
    expect(logListQuery({ status_code: '201' }, now)).toMatchObject({ index: undefined, conditions: [{ path: ['f_status'], value: 201 }] });
    expect(logListQuery({ status_code: '200', provider: 'openai' }, now)).toMatchObject({
      index: { dimension: 'provider', value: 'openai' },
      conditions: [{ path: ['f_status'], value: 200 }],
    });
  });

  it('takes ISO 8601 or epoch seconds, the last 24 hours by default', () => {
    const { fromId, toId } = logListQuery({}, now);
    expect(fromId < toId).toBe(true);
    expect(logListQuery({ start_time: String((now - 24 * 3_600_000) / 1000) }, now).fromId).toBe(fromId);
    expect(logListQuery({ end_time: new Date(now).toISOString() }, now).toId).toBe(toId);
  });

  it('refuses bad values naming the parameter', () => {
    expect(refusal(() => logListQuery({ status_code: '4x' }, now))).toEqual({ status: 400, param: 'status_code' });
    expect(refusal(() => logListQuery({ limit: '101' }, now))).toEqual({ status: 400, param: 'limit' });
    expect(refusal(() => logListQuery({ provider: '' }, now))).toEqual({ status: 400, param: 'provider' });
    expect(refusal(() => logListQuery({ order_by: 'cost' }, now))).toEqual({ status: 400, param: 'order_by' });
  });
});

describe('groups queries', () => {
  it('widens the range to whole hours and says so', () => {
    const query = groupsQuery('model', { start_time: '2026-11-27T09:15:00Z', end_time: '2026-11-27T11:00:00Z' }, now);
    expect([query.fromHour, query.toHour]).toEqual(['2026-11-27T09', '2026-11-27T10']);
    expect(usedRange(query)).toEqual({ start_time: '2026-11-27T09:00:00.000Z', end_time: '2026-11-27T11:00:00.000Z' });
    const rounded = groupsQuery('model', { start_time: '2026-11-27T09:15:00Z', end_time: '2026-11-27T11:00:01Z' }, now);
    expect(rounded.toHour).toBe('2026-11-27T11');
  });

  it('maps groupBy names to dimensions and filters to theirs', () => {
    expect(groupsQuery('ai_service', {}, now).dimension).toBe('provider');
    expect(groupsQuery('metadata._user', {}, now).dimension).toBe('user');
    expect(groupsQuery('metadata.team', {}, now).dimension).toBe('meta.team');
    expect(groupsQuery('workspace', { 'metadata._user': 'ana', status_code: '5xx' }, now).filters).toEqual([
      { dimension: 'user', value: 'ana' },
      { dimension: 'status_class', value: '5xx' },
    ]);
    expect(groupsQuery('model', { columns: 'cost', order_by: '-cost' }, now).orderBy).toEqual({ column: 'cost', descending: false });
  });

  it('refuses what it cannot answer, naming the parameter', () => {
    expect(refusal(() => groupsQuery('team', {}, now))).toEqual({ status: 400, param: 'groupBy' });
    expect(refusal(() => groupsQuery('model', { trace_id: 'x' }, now))).toEqual({ status: 400, param: 'trace_id' });
    expect(refusal(() => groupsQuery('model', { 'metadata.team': 'red' }, now))).toEqual({ status: 400, param: 'metadata.team' });
    expect(refusal(() => groupsQuery('model', { columns: 'cost,p90_latency' }, now))).toEqual({ status: 400, param: 'columns' });
    expect(refusal(() => groupsQuery('model', { interval: 'minute' }, now))).toEqual({ status: 400, param: 'interval' });
  });
});
