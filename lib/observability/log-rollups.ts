import { createHash } from 'node:crypto';
import { rollupKey } from '../store/keys';
import type { RollupAdd } from '../store/log-rollups';
import type { StoredLogLine } from '../store/request-logs';
import {
  dimensionValues,
  isCacheHit,
  latencyBucket,
  metadataValues,
  rolledUpMetadataKeys,
  rollupDimensions,
  startedAtMs,
  type RollupDimension,
} from './log-dimensions';
import type { RequestLogRecord } from './request-log';

/** `2026-11-27T13`: the hour a rollup item counts, as its sort key starts. */
export const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);

/** The prefix of a metadata key as a group dimension (`meta._user` is the `user` dimension). */
export const metadataDimension = (key: string) => `meta.${key}`;

/**
 * Successes are most of the traffic, so listing them by status reads the workspace's own partition
 * (nearly all of it matches) and a successful record is spared an index item.
 */
export const unindexedStatusClass = '2xx';

/** What a record stores for the log filters: the fields they compare, and the index partitions listing it. */
export function logFilters(record: RequestLogRecord): NonNullable<StoredLogLine['filters']> {
  const dims = dimensionValues(record);
  const metadata = metadataValues(record);
  const fields: Record<string, string | number | Record<string, string>> = { f_status: record.status, f_status_class: dims.status_class! };
  const index: { dimension: string; value: string }[] = [];
  for (const dimension of ['provider', 'model', 'api_key', 'config', 'prompt', 'cache'] as const) {
    const value = dims[dimension];
    if (value === undefined) continue;
    fields[`f_${dimension}`] = value;
    index.push({ dimension, value });
  }
  if (dims.status_class !== unindexedStatusClass) index.push({ dimension: 'status_class', value: dims.status_class! });
  fields.f_trace = record.trace_id;
  index.push({ dimension: 'trace', value: record.trace_id });
  if (Object.keys(metadata).length > 0) fields.f_md = metadata;
  for (const [key, value] of Object.entries(metadata)) index.push({ dimension: metadataDimension(key), value });
  return { fields, index };
}

/**
 * The rollup items a record adds into (docs/decisions.md, "Analytics rollups"), for an inference
 * request of a workspace; none for anything else (control-plane calls are not counted).
 *
 * With D the dimensions the record has (the nine of `rollupDimensions`, and up to four metadata
 * keys): the workspace's total, one item per dimension (its value, or `''` for the null group of
 * a dimension the record lacks), one per pair of core dimensions and one per (core dimension,
 * metadata key) pair, and the record's cell. A pair item answers both "filter a, group by b" (its
 * own key) and "filter b, group by a" (gsi2).
 */
export function rollupAdds(record: RequestLogRecord): RollupAdd[] | undefined {
  if (!record.inference || !record.workspace_id) return undefined;
  const workspace = record.workspace_id;
  const startedMs = startedAtMs(record);
  const hour = hourOf(startedMs);
  const hourStart = Math.floor(Date.parse(`${hour}:00:00Z`) / 1000);
  const seenAt = new Date(startedMs).toISOString();
  const add = counters(record);
  const dims = dimensionValues(record);
  const metaKeys = rolledUpMetadataKeys(record);
  const metadata = metadataValues(record);
  const adds: RollupAdd[] = [];
  const item = (key: RollupAdd['key'], index?: RollupAdd['index'], fields?: Record<string, string>) =>
    adds.push({ key, index, fields, add, seenAt, hourStart });

  item({ pk: rollupKey.view(workspace, undefined, 'all'), sk: rollupKey.sort(hour, '') });
  const groups: { dimension: string; value: string | undefined }[] = [
    ...rollupDimensions.map((dimension) => ({ dimension, value: dims[dimension] })),
    ...metaKeys.map((key) => ({ dimension: metadataDimension(key), value: metadata[key] })),
  ];
  for (const { dimension, value = '' } of groups) {
    item(
      { pk: rollupKey.view(workspace, undefined, dimension), sk: rollupKey.sort(hour, value) },
      { pk: rollupKey.view(workspace, { dimension, value }, 'all'), sk: rollupKey.sort(hour, '') },
    );
  }
  // Pairs: core × core, and core × metadata key (core dimensions come first in `groups`).
  for (let a = 0; a < rollupDimensions.length; a++) {
    for (let b = a + 1; b < groups.length; b++) {
      const first = groups[a]!;
      const second = groups[b]!;
      if (first.value === undefined && second.value === undefined) continue;
      const [va, vb] = [first.value ?? '', second.value ?? ''];
      item(
        { pk: rollupKey.view(workspace, { dimension: first.dimension, value: va }, second.dimension), sk: rollupKey.sort(hour, vb) },
        { pk: rollupKey.view(workspace, { dimension: second.dimension, value: vb }, first.dimension), sk: rollupKey.sort(hour, va) },
      );
    }
  }
  const cell: Record<string, string> = {};
  for (const { dimension, value } of groups) if (value !== undefined) cell[`d_${dimension}`] = value;
  const hash = createHash('sha256').update(JSON.stringify(cell)).digest('base64url').slice(0, 22);
  item({ pk: rollupKey.cells(workspace, hour.slice(0, 10)), sk: rollupKey.cell(hour, hash) }, undefined, cell);
  return adds;
}

/** What one record adds to each of its rollup items. Costs and latencies go as exact decimals. */
function counters(record: RequestLogRecord): Record<string, number | string> {
  const add: Record<string, number | string> = { requests: 1 };
  const usage = record.usage;
  if (usage?.prompt_tokens) add.input_tokens = usage.prompt_tokens;
  if (usage?.completion_tokens) add.output_tokens = usage.completion_tokens;
  if (usage?.total_tokens) add.total_tokens = usage.total_tokens;
  if (record.cost === null) add.cost_unknown = 1;
  else if (record.cost > 0) add.cost = record.cost.toFixed(9);
  if (record.status >= 400) add.errors = 1;
  if (record.status >= 200 && record.status < 300) add.ok = 1;
  if (isCacheHit(record.cache_status)) add.cache_hits = 1;
  add.latency_sum = record.latency_ms.toFixed(3);
  add[`h_${latencyBucket(record.latency_ms)}`] = 1;
  return add;
}

export type { RollupDimension };
