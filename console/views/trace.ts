import { getJson, segment } from '../api';
import { el, show } from '../dom';
import { count, ms, statusClass, time, usd } from '../format';
import { href } from '../router';
import { type SpanNode, spanTree } from '../spans';

/** One trace: its spans as a tree, and the record of the span chosen (the first one at first). */
export async function traceView(root: HTMLElement, traceId: string): Promise<void> {
  show(root, el('p', { class: 'muted' }, 'Loading the trace…'));
  const answer = await getJson<{ data: any[]; feedback?: any[] }>(`logs/${segment(traceId)}`);
  const tree = spanTree(answer.data);
  const detail = el('section', { class: 'span-detail' });
  const items = new Map<SpanNode, HTMLElement>();
  const choose = (node: SpanNode) => {
    for (const [other, item] of items) item.classList.toggle('chosen', other === node);
    show(detail, ...(node.kind === 'request' ? requestDetail(node.record) : attemptDetail(node.record)));
  };
  const list = (nodes: SpanNode[]): HTMLElement =>
    el(
      'ul',
      { class: 'span-tree' },
      ...nodes.map((node) => {
        const item = el(
          'button',
          { type: 'button', class: `span ${node.kind}`, 'data-kind': node.kind, onclick: () => choose(node) },
          el('span', { class: 'span-name mono' }, node.name),
          el('span', { class: statusClass(node.status) }, node.status || 'no answer'),
          el('span', { class: 'num' }, ms(node.latencyMs)),
        );
        items.set(node, item);
        return el('li', {}, item, node.children.length > 0 ? list(node.children) : null);
      }),
    );
  show(
    root,
    el('p', {}, el('a', { href: href('requests') }, '← Recent requests')),
    el('h1', {}, 'Trace ', el('span', { class: 'mono', id: 'trace-id' }, traceId)),
    el('div', { class: 'trace' }, el('section', { class: 'spans' }, el('h2', {}, 'Spans'), list(tree)), detail),
    answer.feedback?.length ? el('section', {}, el('h2', {}, 'Feedback'), json(answer.feedback)) : null,
  );
  if (tree[0]) choose(tree[0]);
}

function facts(rows: [string, unknown][]): HTMLElement {
  return el(
    'dl',
    { class: 'facts' },
    ...rows.filter(([, value]) => value !== undefined && value !== '').flatMap(([name, value]) => [el('dt', {}, name), el('dd', {}, String(value))]),
  );
}

function requestDetail(record: any): HTMLElement[] {
  const usage = record.usage ?? record.saved_usage;
  return [
    el('h2', {}, `${record.method} ${record.path}`),
    facts([
      ['Status', record.status],
      ['Started', time(record.started_at)],
      ['Latency', ms(record.latency_ms)],
      ['Provider', record.provider],
      ['Model', record.model],
      ['Cache', record.cache_status ?? 'not used'],
      [
        'Tokens',
        usage ? `${count(usage.prompt_tokens)} in, ${count(usage.completion_tokens)} out${record.saved_usage ? ' (saved by the cache)' : ''}` : undefined,
      ],
      ['Cost', usd(record.cost)],
      ['Span', record.span_id],
      ['Parent span', record.parent_span_id],
      ['Config', record.config_id],
      ['Prompt', record.prompt_id ? `${record.prompt_id} v${record.prompt_version}` : undefined],
      ['Key', record.api_key_id],
      ['Error', record.error ? `${record.error.code ?? ''} ${record.error.message}`.trim() : undefined],
    ]),
    el('h3', {}, 'Attempts'),
    attempts(record.attempts ?? []),
    el('h3', {}, 'Hook results'),
    hooks(record.hook_results),
    el('details', {}, el('summary', {}, 'The whole record'), json(record)),
  ];
}

function attemptDetail(attempt: any): HTMLElement[] {
  return [
    el('h2', {}, `Attempt at ${attempt.provider}`),
    facts([
      ['Status', attempt.status || 'no answer'],
      ['Model', attempt.model],
      ['Started', time(attempt.started_at)],
      ['Latency', ms(attempt.latency_ms)],
    ]),
  ];
}

function attempts(list: any[]): HTMLElement {
  if (list.length === 0) return el('p', { class: 'muted' }, 'No provider was called (a cache hit, a refusal, or a control route).');
  return el(
    'table',
    { class: 'attempts' },
    el('thead', {}, el('tr', {}, ...['#', 'Provider', 'Model', 'Status', 'Latency'].map((name) => el('th', {}, name)))),
    el(
      'tbody',
      {},
      ...list.map((attempt, index) =>
        el(
          'tr',
          {},
          el('td', {}, index + 1),
          el('td', {}, attempt.provider),
          el('td', {}, attempt.model ?? ''),
          el('td', { class: statusClass(attempt.status) }, attempt.status || 'no answer'),
          el('td', { class: 'num' }, ms(attempt.latency_ms)),
        ),
      ),
    ),
  );
}

function hooks(results: any): HTMLElement {
  const all = [
    ...(results?.before_request_hooks ?? []).map((hook: any) => ['before', hook]),
    ...(results?.after_request_hooks ?? []).map((hook: any) => ['after', hook]),
  ];
  if (all.length === 0) return el('p', { class: 'muted' }, 'No hooks ran.');
  return el(
    'ul',
    { class: 'hooks' },
    ...all.map(([side, hook]) =>
      el(
        'li',
        {},
        el('span', { class: hook.verdict ? 'good' : 'bad' }, hook.verdict ? 'passed' : hook.deny ? 'denied' : 'failed'),
        ` ${side}: `,
        el('span', { class: 'mono' }, hook.id),
        ` (${hook.type}${hook.async ? ', async' : ''}, ${ms(hook.execution_time)})`,
        el('ul', {}, ...(hook.checks ?? []).map((check: any) => el('li', {}, `${check.id}: ${check.verdict ? 'passed' : 'failed'}`))),
      ),
    ),
  );
}

export function json(value: unknown): HTMLElement {
  return el('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}
