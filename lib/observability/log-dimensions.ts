import type { RequestLogRecord } from './request-log';

/**
 * The dimensions of a request-log record that logs are filtered by and analytics grouped by, and
 * the latency sketch the rollups keep. Pure: the store writes and reads what this describes.
 */

/** Dimensions a record is indexed and rolled up by, in the fixed order rollup pair items use. */
export const rollupDimensions = ['provider', 'model', 'status', 'status_class', 'api_key', 'config', 'prompt', 'cache', 'user'] as const;
export type RollupDimension = (typeof rollupDimensions)[number];

/** Metadata keys beyond `_user` rolled up per record (the first ones in name order): the write budget of one ingest transaction. */
export const maxRolledUpMetadataKeys = 4;
/** Metadata values longer than this are not indexed or rolled up (they still are in the record). */
export const maxIndexedValueLength = 128;

/** A record's value of each dimension it has. */
export function dimensionValues(record: RequestLogRecord): Partial<Record<RollupDimension, string>> {
  const values: Partial<Record<RollupDimension, string>> = {
    status: String(record.status),
    status_class: statusClass(record.status),
  };
  if (record.provider) values.provider = record.provider;
  if (record.model) values.model = String(record.model);
  if (record.api_key_id) values.api_key = record.api_key_id;
  if (record.config_id) values.config = record.config_id;
  if (record.prompt_id) values.prompt = record.prompt_id;
  if (record.cache_status) values.cache = record.cache_status;
  const user = metadataValue(record.metadata?._user);
  if (user !== undefined) values.user = user;
  return values;
}

export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** A metadata value as filters compare it: strings as they are, numbers and booleans as text; objects are not comparable. */
export function metadataValue(value: unknown): string | undefined {
  const text = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
  return text !== undefined && text.length <= maxIndexedValueLength ? text : undefined;
}

/** The record's comparable metadata values (`_user` included), by key. */
export function metadataValues(record: RequestLogRecord): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(record.metadata ?? {})) {
    const text = metadataValue(value);
    if (text !== undefined && key.length <= maxIndexedValueLength) values[key] = text;
  }
  return values;
}

/** Metadata keys other than `_user` rolled up for this record. */
export function rolledUpMetadataKeys(record: RequestLogRecord): string[] {
  return Object.keys(metadataValues(record))
    .filter((key) => key !== '_user')
    .sort()
    .slice(0, maxRolledUpMetadataKeys);
}

/** When the request started: `started_at`, or for records written before it existed, the end less the latency. */
export function startedAtMs(record: RequestLogRecord): number {
  if (record.started_at) return Date.parse(record.started_at);
  return Date.parse(record.created_at) - Math.round(record.latency_ms);
}

export function isCacheHit(cacheStatus: string | undefined): boolean {
  return cacheStatus === 'HIT' || cacheStatus === 'SEMANTIC HIT';
}

// ---------------------------------------------------------------------------------------------
// Latency sketch: log-spaced buckets (DDSketch's mapping) with relative accuracy 1%.

/** The sketch's relative accuracy: a quantile is answered within this fraction of the true value. */
export const sketchRelativeAccuracy = 0.01;
const gamma = (1 + sketchRelativeAccuracy) / (1 - sketchRelativeAccuracy);
const logGamma = Math.log(gamma);

/** The bucket of a latency in ms: bucket i holds values in (γ^(i-1), γ^i]; values ≤ 0 go to bucket `z`. */
export function latencyBucket(latencyMs: number): string {
  if (!(latencyMs > 0)) return 'z';
  const index = Math.ceil(Math.log(latencyMs) / logGamma);
  return index < 0 ? `n${-index}` : String(index);
}

/** The value a bucket answers: within the relative accuracy of any value in it. */
export function bucketValue(bucket: string): number {
  if (bucket === 'z') return 0;
  const index = bucket.startsWith('n') ? -Number(bucket.slice(1)) : Number(bucket);
  return (2 * gamma ** index) / (gamma + 1);
}

/**
 * The `q` quantile of a merged histogram (bucket → count), by nearest rank: the ⌈q·n⌉-th smallest
 * value, within the sketch's relative accuracy. Null for an empty histogram.
 */
export function sketchQuantile(histogram: Record<string, number>, q: number): number | null {
  const buckets = Object.entries(histogram)
    .filter(([, count]) => count > 0)
    .map(([bucket, count]) => ({ value: bucketValue(bucket), count }))
    .sort((a, b) => a.value - b.value);
  const total = buckets.reduce((sum, bucket) => sum + bucket.count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const bucket of buckets) {
    seen += bucket.count;
    if (seen >= rank) return bucket.value;
  }
  return buckets.at(-1)!.value;
}
