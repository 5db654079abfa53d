import { describe, expect, it } from 'vitest';
import { spanTree } from '../../console/spans';

const record = (fields: Record<string, unknown>) => ({ method: 'POST', path: '/v1/chat/completions', status: 200, latency_ms: 5, ...fields });

describe('the console’s span tree', () => {
  it('hangs a record under the record whose span it names, and attempts under their request', () => {
    const tree = spanTree([
      record({ id: 'b', span_id: 'answer', parent_span_id: 'plan', started_at: '2026-01-01T00:00:02Z' }),
      record({
        id: 'a',
        span_id: 'plan',
        span_name: 'plan step',
        started_at: '2026-01-01T00:00:01Z',
        attempts: [
          { provider: 'openai', model: 'gpt-4o', status: 503, started_at: '2026-01-01T00:00:01Z', latency_ms: 2 },
          { provider: 'anthropic', status: 200, started_at: '2026-01-01T00:00:01.5Z', latency_ms: 3 },
        ],
      }),
    ]);
    expect(tree).toHaveLength(1);
    const [plan] = tree;
    expect(plan!.name).toBe('plan step');
    expect(plan!.children.map((child) => [child.kind, child.name, child.status])).toEqual([
      ['attempt', 'openai gpt-4o', 503],
      ['attempt', 'anthropic', 200],
      ['request', 'POST /v1/chat/completions', 200],
    ]);
  });

  it('keeps records whose parent is not in the trace, or that name each other, as roots', () => {
    const tree = spanTree([
      record({ id: 'a', span_id: 'x', parent_span_id: 'y', started_at: '2026-01-01T00:00:01Z' }),
      record({ id: 'b', span_id: 'y', parent_span_id: 'x', started_at: '2026-01-01T00:00:02Z' }),
      record({ id: 'c', parent_span_id: 'elsewhere', started_at: '2026-01-01T00:00:03Z' }),
    ]);
    expect(tree.map((node) => node.record.id)).toEqual(['a', 'c']);
    expect(tree[0]!.children.map((node) => node.record.id)).toEqual(['b']);
  });
});
