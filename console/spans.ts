/** A span of a trace: a request's record, or one provider attempt under it. */
export interface SpanNode {
  kind: 'request' | 'attempt';
  name: string;
  status: number;
  startedAt: string;
  latencyMs: number;
  record: any;
  children: SpanNode[];
}

/**
 * The trace's records as a tree: a record whose `parent_span_id` names another record's `span_id`
 * hangs under it, every other one is a root; each record's provider attempts hang under it.
 * Siblings are in the order they started.
 */
export function spanTree(records: readonly any[]): SpanNode[] {
  const started = (record: any) => record.started_at ?? record.created_at;
  const ordered = [...records].sort((a, b) => String(started(a)).localeCompare(String(started(b))));
  const bySpan = new Map<string, SpanNode>();
  const nodes = ordered.map((record) => {
    const node: SpanNode = {
      kind: 'request',
      name: record.span_name ?? `${record.method} ${record.path}`,
      status: record.status,
      startedAt: started(record),
      latencyMs: record.latency_ms,
      record,
      children: (record.attempts ?? []).map((attempt: any) => ({
        kind: 'attempt',
        name: [attempt.provider, attempt.model].filter(Boolean).join(' '),
        status: attempt.status,
        startedAt: attempt.started_at,
        latencyMs: attempt.latency_ms,
        record: attempt,
        children: [],
      })),
    };
    if (record.span_id && !bySpan.has(record.span_id)) bySpan.set(record.span_id, node);
    return node;
  });
  const roots: SpanNode[] = [];
  const position = new Map(nodes.map((node, index) => [node, index]));
  nodes.forEach((node, index) => {
    const parent = node.record.parent_span_id ? bySpan.get(node.record.parent_span_id) : undefined;
    // Only a parent that started earlier: records naming each other as parents would make a loop.
    if (parent && position.get(parent)! < index) parent.children.push(node);
    else roots.push(node);
  });
  return roots;
}
