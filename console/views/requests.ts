import { getJson } from '../api';
import { el, show } from '../dom';
import { count, ms, statusClass, time, usd } from '../format';
import { go, href } from '../router';

/** The filters of GET /v1/logs the view offers (docs/logs.md), as the form names them. */
const textFilters = [
  ['provider', 'Provider', 'openai'],
  ['model', 'Model', 'gpt-4o-mini'],
  ['status_code', 'Status', '200, 4xx, 5xx'],
  ['trace_id', 'Trace id', ''],
] as const;

/** A datetime-local value (the browser's zone) as the ISO 8601 the API takes. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** Recent requests, newest first, filtered; a row opens its trace. */
export function requestsView(root: HTMLElement): void {
  const inputs = new Map<string, HTMLInputElement>();
  const field = (name: string, label: string, input: HTMLInputElement) => {
    inputs.set(name, input);
    return el('label', {}, label, input);
  };
  const table = el('div', { class: 'table-wrap' });
  const more = el('button', { type: 'button', class: 'secondary', hidden: true }, 'Older');
  let after: string | undefined;

  const query = () => ({
    ...Object.fromEntries(textFilters.map(([name]) => [name, inputs.get(name)!.value.trim() || undefined])),
    start_time: isoOf(inputs.get('start_time')!.value),
    end_time: isoOf(inputs.get('end_time')!.value),
    limit: '50',
  });

  async function load(append: boolean) {
    const page = await getJson<{ data: any[]; has_more: boolean; last_id: string | null }>('logs', { ...query(), after: append ? after : undefined });
    after = page.last_id ?? undefined;
    more.hidden = !page.has_more;
    const body = append ? table.querySelector('tbody')! : el('tbody');
    for (const record of page.data) body.append(row(record));
    if (!append) show(table, page.data.length === 0 ? el('p', { class: 'muted' }, 'No requests match.') : el('table', { class: 'requests' }, header(), body));
  }

  const form = el(
    'form',
    { class: 'filters', method: 'post' },
    ...textFilters.map(([name, label, placeholder]) => field(name, label, el('input', { name, placeholder, autocomplete: 'off' }))),
    field('start_time', 'From', el('input', { name: 'start_time', type: 'datetime-local' })),
    field('end_time', 'To', el('input', { name: 'end_time', type: 'datetime-local' })),
    el('button', { type: 'submit' }, 'Filter'),
  );
  const failed = (error: Error) => show(table, el('p', { class: 'error' }, error.message));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load(false).catch(failed);
  });
  more.addEventListener('click', () => void load(true).catch(failed));

  show(root, el('h1', {}, 'Recent requests'), form, table, more);
  void load(false).catch(failed);
}

function header(): HTMLElement {
  const names = ['Started', 'Trace id', 'Request', 'Provider', 'Model', 'Status', 'Latency', 'Tokens', 'Cost', 'Cache'];
  return el('thead', {}, el('tr', {}, ...names.map((name) => el('th', {}, name))));
}

function row(record: any): HTMLElement {
  const open = () => go('trace', record.trace_id);
  return el(
    'tr',
    {
      class: 'clickable',
      tabindex: 0,
      'data-trace-id': record.trace_id,
      onclick: open,
      onkeydown: (event) => (event as KeyboardEvent).key === 'Enter' && open(),
    },
    el('td', {}, time(record.started_at ?? record.created_at)),
    el('td', { class: 'mono' }, el('a', { href: href('trace', record.trace_id) }, record.trace_id)),
    el('td', { class: 'mono' }, `${record.method} ${record.path}`),
    el('td', {}, record.provider ?? ''),
    el('td', {}, record.model ?? ''),
    el('td', { class: statusClass(record.status) }, record.status),
    el('td', { class: 'num' }, ms(record.latency_ms)),
    el('td', { class: 'num' }, count(record.usage?.total_tokens)),
    el('td', { class: 'num' }, usd(record.cost)),
    el('td', {}, record.cache_status ?? ''),
  );
}
