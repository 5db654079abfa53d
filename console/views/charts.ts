import uPlot from 'uplot';
import { getJson } from '../api';
import { el, show } from '../dom';

type Tick = (value: number) => string;
const plain: Tick = (value) => value.toLocaleString();
// Costs of a few requests are fractions of a cent: fixed decimals would print them all as 0, and
// their full decimals would not fit beside the axis.
const dollars: Tick = (value) => (value === 0 ? '$0' : value < 0.01 ? `$${value.toExponential(1)}` : `$${Number(value.toPrecision(3))}`);
const percent: Tick = (value) => `${Math.round(value * 100)}%`;

/** What each chart plots, per provider or model, from the groups route's series (docs/analytics.md). */
const metrics: readonly (readonly [string, string, Tick])[] = [
  ['requests', 'Requests', plain],
  ['error_count', 'Errors', plain],
  ['p50_latency', 'p50 latency (ms)', plain],
  ['p95_latency', 'p95 latency (ms)', plain],
  ['p99_latency', 'p99 latency (ms)', plain],
  ['total_tokens', 'Tokens', plain],
  ['cost', 'Cost (USD)', dollars],
  ['cache_hit_rate', 'Cache hit rate', percent],
];

const ranges = {
  '24h': { label: 'Last 24 hours, hourly', interval: 'hour', hours: 24 },
  '7d': { label: 'Last 7 days, daily', interval: 'day', hours: 7 * 24 },
  '30d': { label: 'Last 30 days, daily', interval: 'day', hours: 30 * 24 },
} as const;

// Distinct under both light and dark backgrounds.
const palette = ['#2f6fde', '#d9480f', '#2b8a3e', '#ae3ec9', '#e8a400', '#0c8599', '#c2255c', '#5f3dc4'];

export function chartsView(root: HTMLElement): void {
  const groupBy = el('select', { name: 'group_by' }, el('option', { value: 'provider' }, 'Provider'), el('option', { value: 'model' }, 'Model'));
  const range = el('select', { name: 'range' }, ...Object.entries(ranges).map(([value, { label }]) => el('option', { value }, label)));
  const grid = el('div', { class: 'charts' });
  const draw = () =>
    void drawCharts(grid, groupBy.value, ranges[range.value as keyof typeof ranges]).catch((error) =>
      show(grid, el('p', { class: 'error' }, String(error.message))),
    );
  groupBy.addEventListener('change', draw);
  range.addEventListener('change', draw);
  show(root, el('h1', {}, 'Charts'), el('div', { class: 'filters' }, el('label', {}, 'Per', groupBy), el('label', {}, 'Over', range)), grid);
  draw();
}

async function drawCharts(grid: HTMLElement, groupBy: string, range: (typeof ranges)[keyof typeof ranges]): Promise<void> {
  show(grid, el('p', { class: 'muted' }, 'Loading…'));
  const answer = await getJson<{ data: any[] }>(`analytics/groups/${groupBy}`, {
    interval: range.interval,
    start_time: String(Math.floor(Date.now() / 1000) - range.hours * 3600),
    columns: metrics
      .map(([name]) => name)
      .filter((name) => name !== 'requests')
      .join(','),
  });
  if (answer.data.length === 0) return show(grid, el('p', { class: 'muted' }, 'No inference requests in this range.'));
  const times = (answer.data[0].series as any[]).map((point) => Date.parse(point.start) / 1000);
  show(grid);
  for (const [metric, title, tick] of metrics) {
    const lines = answer.data.map((row) => (row.series as any[]).map((point) => point[metric] ?? null) as (number | null)[]);
    const nonZero = lines.flat().filter((value) => value !== null && value !== 0).length;
    const card = el('figure', { class: 'chart', 'data-metric': metric, 'data-nonzero': nonZero }, el('figcaption', {}, title));
    grid.append(card);
    new uPlot(
      {
        width: Math.max(280, card.clientWidth - 16),
        height: 180,
        series: [
          {},
          ...answer.data.map((row, index) => ({
            label: String(row[groupBy] ?? 'none'),
            stroke: palette[index % palette.length],
            width: 2,
            points: { show: true, size: 5 },
          })),
        ],
        axes: [{}, { size: 60, values: (_chart, values) => values.map(tick) }],
        // A rate is a fraction: its axis always spans 0 to 100%.
        scales: metric === 'cache_hit_rate' ? { y: { range: [0, 1] } } : {},
        legend: { show: true },
      },
      [times, ...lines],
      card,
    );
  }
}
