import { badRequest } from '../core/errors';
import { newId } from '../core/ids';
import { roundUsd } from '../pricing/prices';
import { rollupKey } from '../store/keys';
import { queryRollups } from '../store/log-rollups';
import type { FilteredLogQuery, LogCondition } from '../store/request-logs';
import { rollupDimensions, sketchQuantile, statusClass } from './log-dimensions';
import { hourOf, metadataDimension, unindexedStatusClass } from './log-rollups';

/**
 * The query parameters of `GET /v1/logs` and the groups routes, and the groups' answers from the
 * rollups (docs/logs.md, docs/analytics.md).
 */

const hourMs = 3_600_000;
const defaultRangeMs = 24 * hourMs;
const maxRangeMs = 400 * 24 * hourMs;

/** A filter on one dimension: `status` for an exact status code, `status_class` for `4xx`. */
export interface DimensionFilter {
  dimension: string;
  value: string;
}

/** Filter parameters both routes take, and the dimension each names. */
const filterParams: Record<string, string> = {
  provider: 'provider',
  model: 'model',
  api_key_id: 'api_key',
  config_id: 'config',
  prompt_id: 'prompt',
  cache_status: 'cache',
};
/** Only `GET /v1/logs` takes these. */
const logOnlyParams: Record<string, string> = { trace_id: 'trace' };

function time(param: string, text: string): number {
  const value = /^\d{1,12}(\.\d+)?$/.test(text) ? Number(text) * 1000 : /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(value))
    throw badRequest(
      `${param} must be an ISO 8601 time (2026-11-27T09:00:00Z) or epoch seconds; got ${JSON.stringify(text.slice(0, 64))}.`,
      param,
      'invalid_time',
    );
  return value;
}

/** `start_time` and `end_time` (default: the last 24 h), in ms. */
function timeRange(query: Record<string, string>, now: number): { start: number; end: number } {
  const end = query.end_time ? time('end_time', query.end_time) : now;
  const start = query.start_time ? time('start_time', query.start_time) : end - defaultRangeMs;
  if (start > end) throw badRequest('start_time must not be after end_time.', 'start_time', 'invalid_time');
  if (end - start > maxRangeMs) throw badRequest('The time range is at most 400 days.', 'start_time', 'invalid_time');
  return { start, end };
}

/** The filters of a query: the listed parameters and `metadata.<key>`; `metadataKeys` limits which keys a route takes. */
function filters(query: Record<string, string>, params: Record<string, string>, metadataKeys?: readonly string[]): DimensionFilter[] {
  const found: DimensionFilter[] = [];
  for (const [param, value] of Object.entries(query)) {
    if (param in params) {
      if (value === '') throw badRequest(`${param} must not be empty.`, param, 'invalid_filter');
      found.push({ dimension: params[param]!, value });
    } else if (param === 'status_code') {
      if (/^[1-5]\d\d$/.test(value)) found.push({ dimension: 'status', value });
      else if (/^[1-5]xx$/i.test(value)) found.push({ dimension: 'status_class', value: value.toLowerCase() });
      else
        throw badRequest(
          `status_code must be a status such as 429 or a class such as 4xx; got ${JSON.stringify(value.slice(0, 32))}.`,
          param,
          'invalid_filter',
        );
    } else if (param.startsWith('metadata.') && param.length > 'metadata.'.length) {
      const key = param.slice('metadata.'.length);
      if (metadataKeys && !metadataKeys.includes(key)) throw badRequest(`Groups are filtered by metadata._user only, not ${param}.`, param, 'invalid_filter');
      found.push({ dimension: key === '_user' && metadataKeys ? 'user' : metadataDimension(key), value });
    }
  }
  return found;
}

function refuseUnknown(query: Record<string, string>, known: readonly string[], what: string): void {
  for (const param of Object.keys(query)) {
    if (known.includes(param) || param in filterParams || param === 'status_code' || param.startsWith('metadata.')) continue;
    throw badRequest(
      `${what} does not take ${param}; it takes ${[...known, ...Object.keys(filterParams), 'status_code', 'metadata.<key>'].join(', ')}.`,
      param,
      'unknown_parameter',
    );
  }
}

// ---------------------------------------------------------------------------------------------
// GET /v1/logs

/** Which filters read an index partition, most selective first; the others are checked after the read. */
const indexOrder = ['trace', 'prompt', 'config', 'meta', 'api_key', 'model', 'status', 'provider', 'cache', 'status_class'];

const cursorPattern = /^log_[0-9a-z]{1,64}$/;

/** A `GET /v1/logs` query as the store reads it. */
export function logListQuery(query: Record<string, string>, now = Date.now()): FilteredLogQuery {
  refuseUnknown(query, ['start_time', 'end_time', 'limit', 'after', 'trace_id'], 'GET /v1/logs');
  const { start, end } = timeRange(query, now);
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badRequest('limit must be an integer from 1 to 100.', 'limit', 'invalid_limit');
  const after = query.after || undefined;
  if (after !== undefined && !cursorPattern.test(after))
    throw badRequest('after must be the last_id of the previous page, e.g. "log_01jd3…".', 'after', 'invalid_cursor');
  const found = filters(query, { ...filterParams, ...logOnlyParams });
  const rank = (filter: DimensionFilter) => indexOrder.indexOf(filter.dimension.startsWith('meta.') ? 'meta' : filter.dimension);
  // An exact status is read from its class's partition, and checked after the read.
  const partitionOf = (filter: DimensionFilter) =>
    filter.dimension === 'status' ? { dimension: 'status_class', value: statusClass(Number(filter.value)) } : filter;
  const hasPartition = (filter: DimensionFilter) => {
    const { dimension, value } = partitionOf(filter);
    return dimension !== 'status_class' || value !== unindexedStatusClass;
  };
  const chosen = found.filter(hasPartition).sort((a, b) => rank(a) - rank(b))[0];
  const index = chosen && partitionOf(chosen);
  const conditions: LogCondition[] = found
    .filter((filter) => filter !== chosen || filter.dimension === 'status')
    .map((filter) => ({
      path: filter.dimension.startsWith('meta.') ? ['f_md', filter.dimension.slice('meta.'.length)] : [`f_${filter.dimension}`],
      value: filter.dimension === 'status' ? Number(filter.value) : filter.value,
    }));
  const idTime = (ms: number) => newId('log', Math.max(0, Math.floor(ms))).slice(0, 'log_'.length + 10);
  return { index, conditions, fromId: idTime(start), toId: idTime(end), limit, after };
}

// ---------------------------------------------------------------------------------------------
// Groups

export const groupColumns = [
  'cost',
  'total_tokens',
  'avg_tokens',
  'avg_input_tokens',
  'avg_output_tokens',
  'avg_latency',
  'p50_latency',
  'p95_latency',
  'p99_latency',
  'success_rate',
  'error_count',
  'cache_hit_rate',
  'last_seen',
  'first_seen',
] as const;
export type GroupColumn = (typeof groupColumns)[number];

const groupByDimensions: Record<string, string> = {
  ai_service: 'provider',
  provider: 'provider',
  model: 'model',
  status_code: 'status',
  api_key: 'api_key',
  config: 'config',
  prompt: 'prompt',
  workspace: 'all',
};

export interface GroupsQuery {
  groupBy: string;
  /** The rollup dimension grouped by (`all` for workspaces). */
  dimension: string;
  columns: GroupColumn[];
  interval?: 'hour' | 'day';
  orderBy: { column: string; descending: boolean };
  filters: DimensionFilter[];
  /** Whole hours, `YYYY-MM-DDTHH`, both included. */
  fromHour: string;
  toHour: string;
}

/** A groups route's query: a 400 naming the parameter for anything it cannot answer. */
export function groupsQuery(groupBy: string, query: Record<string, string>, now = Date.now()): GroupsQuery {
  let dimension = groupByDimensions[groupBy];
  if (groupBy.startsWith('metadata.') && groupBy.length > 'metadata.'.length) {
    const key = groupBy.slice('metadata.'.length);
    dimension = key === '_user' ? 'user' : metadataDimension(key);
  }
  if (!dimension)
    throw badRequest(
      `groupBy must be one of ${Object.keys(groupByDimensions).join(', ')} or metadata.<key>; got ${JSON.stringify(groupBy.slice(0, 64))}.`,
      'groupBy',
      'invalid_group_by',
    );
  refuseUnknown(query, ['start_time', 'end_time', 'columns', 'interval', 'order_by'], 'A groups route');
  const columns: GroupColumn[] = [];
  for (const column of (query.columns ?? '').split(',').map((name) => name.trim())) {
    if (column === '') continue;
    if (!(groupColumns as readonly string[]).includes(column))
      throw badRequest(`columns takes ${groupColumns.join(', ')}; got ${JSON.stringify(column.slice(0, 64))}.`, 'columns', 'invalid_column');
    if (!columns.includes(column as GroupColumn)) columns.push(column as GroupColumn);
  }
  const interval = query.interval;
  if (interval !== undefined && interval !== 'hour' && interval !== 'day') throw badRequest('interval must be hour or day.', 'interval', 'invalid_interval');
  // `order_by=cost` sorts descending, `order_by=-cost` ascending.
  const order = query.order_by ?? 'requests';
  const orderBy = order.startsWith('-') ? { column: order.slice(1), descending: false } : { column: order, descending: true };
  if (orderBy.column !== 'requests' && !columns.includes(orderBy.column as GroupColumn))
    throw badRequest(
      `order_by must be requests or one of the columns asked for (${columns.join(', ') || 'none'}), optionally led by -.`,
      'order_by',
      'invalid_order_by',
    );
  const found = filters(query, filterParams, ['_user']);
  const { start, end } = timeRange(query, now);
  return { groupBy, dimension, columns, interval, orderBy, filters: found, fromHour: hourOf(start), toHour: hourOf(Math.ceil(end / hourMs) * hourMs - 1) };
}

/** What a rollup item counts, summed over items. */
interface Totals {
  requests: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost: number;
  errors: number;
  ok: number;
  cache_hits: number;
  latency_sum: number;
  histogram: Record<string, number>;
  first_seen?: string;
  last_seen?: string;
}

const emptyTotals = (): Totals => ({
  requests: 0,
  input_tokens: 0,
  output_tokens: 0,
  total_tokens: 0,
  cost: 0,
  errors: 0,
  ok: 0,
  cache_hits: 0,
  latency_sum: 0,
  histogram: {},
});

function addInto(totals: Totals, item: Record<string, any>): void {
  for (const name of ['requests', 'input_tokens', 'output_tokens', 'total_tokens', 'cost', 'errors', 'ok', 'cache_hits', 'latency_sum'] as const) {
    if (item[name] !== undefined) totals[name] += Number(item[name]);
  }
  for (const name in item) if (name.startsWith('h_')) totals.histogram[name.slice(2)] = (totals.histogram[name.slice(2)] ?? 0) + Number(item[name]);
  if (item.first_seen && (!totals.first_seen || item.first_seen < totals.first_seen)) totals.first_seen = item.first_seen;
  if (item.last_seen && (!totals.last_seen || item.last_seen > totals.last_seen)) totals.last_seen = item.last_seen;
}

const round = (value: number, digits = 6) => Math.round(value * 10 ** digits) / 10 ** digits;
const ratio = (part: number, whole: number) => (whole === 0 ? null : round(part / whole));

function columnValue(totals: Totals, column: GroupColumn): number | string | null {
  const { requests } = totals;
  switch (column) {
    case 'cost':
      return roundUsd(totals.cost);
    case 'total_tokens':
      return totals.total_tokens;
    case 'avg_tokens':
      return ratio(totals.total_tokens, requests);
    case 'avg_input_tokens':
      return ratio(totals.input_tokens, requests);
    case 'avg_output_tokens':
      return ratio(totals.output_tokens, requests);
    case 'avg_latency':
      return requests === 0 ? null : round(totals.latency_sum / requests, 3);
    case 'p50_latency':
      return nullableRound(sketchQuantile(totals.histogram, 0.5));
    case 'p95_latency':
      return nullableRound(sketchQuantile(totals.histogram, 0.95));
    case 'p99_latency':
      return nullableRound(sketchQuantile(totals.histogram, 0.99));
    case 'success_rate':
      return ratio(totals.ok, requests);
    case 'error_count':
      return totals.errors;
    case 'cache_hit_rate':
      return ratio(totals.cache_hits, requests);
    case 'last_seen':
      return totals.last_seen ?? null;
    case 'first_seen':
      return totals.first_seen ?? null;
  }
}

// Six decimals: a rounding of the answer must not add to the sketch's 1% on sub-millisecond latencies.
const nullableRound = (value: number | null) => (value === null ? null : round(value, 6));

/**
 * The position of a dimension in the rollups' pair order: core dimensions, then metadata keys. A
 * view filtered by a dimension of a higher rank than the one grouped by is the swapped side (gsi2)
 * of a pair item; `all` (the total) ranks first, "filter f, group by all" being the gsi2 side of f's own item.
 */
const dimensionRank = (dimension: string) =>
  dimension === 'all' ? -1 : dimension.startsWith('meta.') ? rollupDimensions.length : rollupDimensions.indexOf(dimension as never);

interface Counted {
  value: string | null;
  hour: string;
  item: Record<string, any>;
}

/**
 * The rollup items of one workspace the query needs, each with its group value and hour: one view
 * (a Query of hours × group values items) for no filter or one, the cells of the range's days for two or more.
 */
async function countedItems(workspaceId: string, query: GroupsQuery): Promise<Counted[]> {
  const { dimension, filters: found, fromHour, toHour } = query;
  if (found.length >= 2) {
    const counted: Counted[] = [];
    const days: string[] = [];
    for (let day = Date.parse(`${fromHour.slice(0, 10)}T00:00:00Z`); day <= Date.parse(`${toHour}:00:00Z`); day += 24 * hourMs)
      days.push(new Date(day).toISOString().slice(0, 10));
    const pages = await Promise.all(days.map((day) => queryRollups({ partition: rollupKey.cells(workspaceId, day) }, fromHour, toHour)));
    for (const item of pages.flat()) {
      if (item.requests === undefined) continue;
      if (!found.every((filter) => item[`d_${filter.dimension}`] === filter.value)) continue;
      if (dimension.startsWith('meta.') && item[`d_${dimension}`] === undefined) continue;
      counted.push({ value: dimension === 'all' ? '' : (item[`d_${dimension}`] ?? ''), hour: String(item.sk).slice(0, 13), item });
    }
    return counted;
  }
  const filter = found[0];
  const sameDimension = filter && filter.dimension === dimension;
  const viewFilter = filter && !sameDimension ? filter : undefined;
  const swapped = viewFilter && dimensionRank(viewFilter.dimension) > dimensionRank(dimension);
  const items = await queryRollups({ partition: rollupKey.view(workspaceId, viewFilter, dimension), index: swapped ? 'gsi2' : undefined }, fromHour, toHour);
  const counted: Counted[] = [];
  for (const item of items) {
    // An item whose first record's time range was set but whose counts have not landed yet counts nothing.
    if (item.requests === undefined) continue;
    const sort = String(swapped ? item.gsi2sk : item.sk);
    const value = rollupKey.valueOf(sort);
    if (sameDimension && value !== filter.value) continue;
    counted.push({ value, hour: sort.slice(0, 13), item });
  }
  return counted;
}

/** A group's row: its value, `requests`, the columns asked for, and its `series` when an interval is asked for. */
export type GroupRow = Record<string, unknown>;

/** Groups of the workspaces' rollups (one row per workspace for `workspace`), sorted and counted. */
export async function groupRows(workspaceIds: readonly string[], query: GroupsQuery): Promise<GroupRow[]> {
  const byValue = new Map<string, { totals: Totals; series: Map<string, Totals> }>();
  await Promise.all(
    workspaceIds.map(async (workspaceId) => {
      for (const { value, hour, item } of await countedItems(workspaceId, query)) {
        const key = query.dimension === 'all' ? workspaceId : (value ?? '');
        let group = byValue.get(key);
        if (!group) byValue.set(key, (group = { totals: emptyTotals(), series: new Map() }));
        addInto(group.totals, item);
        if (query.interval) {
          const bucket = query.interval === 'day' ? hour.slice(0, 10) : hour;
          let point = group.series.get(bucket);
          if (!point) group.series.set(bucket, (point = emptyTotals()));
          addInto(point, item);
        }
      }
    }),
  );
  const rows = [...byValue.entries()].map(([value, { totals, series }]) => {
    const row: GroupRow = { [query.groupBy]: value === '' ? null : value, requests: totals.requests };
    for (const column of query.columns) row[column] = columnValue(totals, column);
    if (query.interval) row.series = seriesPoints(query, series);
    return row;
  });
  const { column, descending } = query.orderBy;
  const sortValue = (row: GroupRow) => row[column] as number | string | null;
  rows.sort((a, b) => {
    const [x, y] = [sortValue(a), sortValue(b)];
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * (descending ? -1 : 1);
    }
    return String(a[query.groupBy]) < String(b[query.groupBy]) ? -1 : 1;
  });
  return rows;
}

/** Every hour or day of the range, oldest first, empty ones included (a chart's gaps are zeros, not missing points). */
function seriesPoints(query: GroupsQuery, series: Map<string, Totals>): GroupRow[] {
  const points: GroupRow[] = [];
  const step = query.interval === 'day' ? 24 * hourMs : hourMs;
  const first = query.interval === 'day' ? Date.parse(`${query.fromHour.slice(0, 10)}T00:00:00Z`) : Date.parse(`${query.fromHour}:00:00Z`);
  for (let at = first; at <= Date.parse(`${query.toHour}:00:00Z`); at += step) {
    const bucket = new Date(at).toISOString().slice(0, query.interval === 'day' ? 10 : 13);
    const totals = series.get(bucket) ?? emptyTotals();
    const point: GroupRow = { start: new Date(at).toISOString(), requests: totals.requests };
    for (const column of query.columns) point[column] = columnValue(totals, column);
    points.push(point);
  }
  return points;
}

/** The range a groups answer covers: whole hours, the end exclusive. */
export function usedRange(query: GroupsQuery): { start_time: string; end_time: string } {
  return {
    start_time: new Date(Date.parse(`${query.fromHour}:00:00Z`)).toISOString(),
    end_time: new Date(Date.parse(`${query.toHour}:00:00Z`) + hourMs).toISOString(),
  };
}
