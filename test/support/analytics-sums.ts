import { expect } from 'vitest';

/** What the groups answers are checked against: sums of raw request-log records, computed here. */

/** Every column of the groups routes. */
export const columns = [
  'cost',
  'total_tokens',
  'avg_tokens',
  'avg_input_tokens',
  'avg_output_tokens',
  'avg_latency',
  'p95_latency',
  'p99_latency',
  'success_rate',
  'error_count',
  'cache_hit_rate',
  'last_seen',
  'first_seen',
];

/** The nearest-rank quantile of values. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

/** What a groups row should say, computed from raw records. */
export function expectedRow(group: any[]) {
  const sum = (pick: (record: any) => number) => group.reduce((total, record) => total + pick(record), 0);
  const requests = group.length;
  const starts = group.map((record) => record.started_at).sort();
  return {
    requests,
    cost: Math.round(sum((record) => record.cost ?? 0) * 1e9) / 1e9,
    total_tokens: sum((record) => record.usage?.total_tokens ?? 0),
    avg_tokens: sum((record) => record.usage?.total_tokens ?? 0) / requests,
    avg_input_tokens: sum((record) => record.usage?.prompt_tokens ?? 0) / requests,
    avg_output_tokens: sum((record) => record.usage?.completion_tokens ?? 0) / requests,
    avg_latency: sum((record) => record.latency_ms) / requests,
    p95_latency: quantile(
      group.map((record) => record.latency_ms),
      0.95,
    ),
    p99_latency: quantile(
      group.map((record) => record.latency_ms),
      0.99,
    ),
    success_rate: group.filter((record) => record.status >= 200 && record.status < 300).length / requests,
    error_count: group.filter((record) => record.status >= 400).length,
    cache_hit_rate: group.filter((record) => record.cache_status === 'HIT' || record.cache_status === 'SEMANTIC HIT').length / requests,
    first_seen: starts[0],
    last_seen: starts.at(-1),
  };
}

export function expectRowsMatch(rows: any[], groupBy: string, byValue: Map<string | null, any[]>) {
  expect(rows.map((row) => row[groupBy]).sort()).toEqual([...byValue.keys()].sort());
  for (const row of rows) {
    const want = expectedRow(byValue.get(row[groupBy])!);
    const label = `${groupBy}=${row[groupBy]}`;
    expect(row.requests, label).toBe(want.requests);
    expect(row.total_tokens, label).toBe(want.total_tokens);
    expect(row.error_count, label).toBe(want.error_count);
    expect(row.cost, label).toBeCloseTo(want.cost, 9);
    for (const name of ['avg_tokens', 'avg_input_tokens', 'avg_output_tokens', 'success_rate', 'cache_hit_rate'] as const)
      expect(row[name], `${label} ${name}`).toBeCloseTo(want[name], 5);
    expect(row.avg_latency, label).toBeCloseTo(want.avg_latency, 2);
    for (const name of ['p95_latency', 'p99_latency'] as const)
      expect(Math.abs(row[name] - want[name]) / want[name], `${label} ${name}`).toBeLessThanOrEqual(0.0101);
    expect([row.first_seen, row.last_seen], label).toEqual([want.first_seen, want.last_seen]);
  }
}

export const groupOf = (records: any[], pick: (record: any) => string | null | undefined) => {
  const groups = new Map<string | null, any[]>();
  for (const record of records) {
    const value = pick(record) ?? null;
    groups.set(value, [...(groups.get(value) ?? []), record]);
  }
  return groups;
};
