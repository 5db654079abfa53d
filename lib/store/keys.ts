import { sha256Hex } from '../core/sha256';

/**
 * The partition and sort key patterns of the stack's tables. Entities move here as they move behind
 * the store layer; a key pattern is written once, next to the others of its table.
 */

/** State table: one item per (config identity, target path) holding a circuit breaker. */
export const breakerKey = {
  partition: (identity: string) => `CB#${identity}`,
  item: (identity: string, path: string) => ({ pk: breakerKey.partition(identity), sk: path }),
};

/** Control table: the organisation, its workspaces (listed per organisation on gsi1), and the marker that says bootstrap is done. */
export const organisationKey = (id: string) => ({ pk: `ORG#${id}`, sk: 'ORG' });
export const workspaceKey = Object.assign((id: string) => ({ pk: `WS#${id}`, sk: 'WS' }), {
  organisationList: (organisationId: string) => `ORG#${organisationId}#WS`,
});
export const bootstrapMarkerKey = { pk: 'SYSTEM', sk: 'BOOTSTRAP' };

/**
 * Control table: a gateway API key, found by the SHA-256 of its secret; listed per workspace on
 * gsi1 by its time-sortable id.
 */
export const apiKeyKey = {
  item: (hash: string) => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#APIKEY`,
};

/**
 * Logs table: a request's record under its workspace, by its own time-sortable id; records of a
 * trace the caller named are indexed on gsi1 under that trace.
 */
export const requestLogKey = {
  workspace: (workspaceId: string) => `WS#${workspaceId}`,
  item: (workspaceId: string, id: string) => ({ pk: requestLogKey.workspace(workspaceId), sk: `LOG#${id}` }),
  sortPrefix: 'LOG#',
  trace: (workspaceId: string, traceId: string) => `WS#${workspaceId}#TRACE#${traceId}`,
};

/** Logs table: a feedback on a trace, by workspace and id; a trace's feedback is listed on gsi1. */
export const feedbackKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#FEEDBACK#${id}`, sk: 'FEEDBACK' }),
  trace: (workspaceId: string, traceId: string) => `WS#${workspaceId}#FEEDBACK_TRACE#${traceId}`,
};

/** Control table: a provider integration of the catalog, by workspace and slug; listed per workspace on gsi1. */
export const providerIntegrationKey = {
  item: (workspaceId: string, slug: string) => ({ pk: `WS#${workspaceId}#PROVIDER#${slug}`, sk: 'PROVIDER' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#PROVIDER`,
};

/** Control table: a saved guardrail, by workspace and id; listed per workspace on gsi1. */
export const guardrailKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#GUARDRAIL#${id}`, sk: 'GUARDRAIL' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#GUARDRAIL`,
};

/**
 * Control table: a saved config's head (the latest version in it) and one item per version, under
 * one partition; heads are listed per workspace on gsi1.
 */
export const savedConfigKey = {
  partition: (workspaceId: string, id: string) => `WS#${workspaceId}#CONFIG#${id}`,
  head: (workspaceId: string, id: string) => ({ pk: savedConfigKey.partition(workspaceId, id), sk: 'CONFIG' }),
  headSort: 'CONFIG',
  version: (workspaceId: string, id: string, version: number) => ({
    pk: savedConfigKey.partition(workspaceId, id),
    sk: `V#${String(version).padStart(10, '0')}`,
  }),
  versionPrefix: 'V#',
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#CONFIG`,
};

/**
 * State table: a cached answer, under its workspace (so a purge is one Query), sorted by cache
 * partition and request key (so a namespace's purge is a prefix of it). A body too large for an
 * item is an S3 object under `cache/`, the prefix the bucket's lifecycle rule expires.
 */
export const cacheEntryKey = {
  partition: (workspaceId: string) => `CACHE#${workspaceId}`,
  item: (workspaceId: string, partition: string, key: string) => ({ pk: cacheEntryKey.partition(workspaceId), sk: `${partition}#${key}` }),
  sortPrefix: (partition: string) => `${partition}#`,
  bodyObject: (workspaceId: string, partition: string, key: string) => `cache/${workspaceId}/${partition}/${key}`,
};

/**
 * State table: a semantic cache entry, once per LSH table, under the bucket its vector falls in
 * there (so a lookup is one Query per table), sorted by the entry's time-sortable id (so a Query
 * reads the newest first). The scope, a hash, keeps requests that differ in anything but the last
 * user message in buckets of their own.
 */
export const semanticEntryKey = {
  bucket: (workspaceId: string, scope: string, table: number, signature: string) => `SEMCACHE#${workspaceId}#${scope}#${table}#${signature}`,
  item: (workspaceId: string, scope: string, table: number, signature: string, id: string) => ({
    pk: semanticEntryKey.bucket(workspaceId, scope, table, signature),
    sk: id,
  }),
};

/**
 * Control table: a prompt or partial (`kind`), versioned like a saved config: a head holding the
 * latest and published version numbers, one item per version under the same partition, and an
 * item per slug (a prompt's slug, a partial's name) that points at the id. Heads are listed per
 * workspace on gsi1.
 */
export const promptKey = {
  partition: (kind: PromptKind, workspaceId: string, id: string) => `WS#${workspaceId}#${kind}#${id}`,
  head: (kind: PromptKind, workspaceId: string, id: string) => ({ pk: promptKey.partition(kind, workspaceId, id), sk: kind }),
  version: (kind: PromptKind, workspaceId: string, id: string, version: number) => ({
    pk: promptKey.partition(kind, workspaceId, id),
    sk: `V#${String(version).padStart(10, '0')}`,
  }),
  versionPrefix: 'V#',
  slug: (kind: PromptKind, workspaceId: string, slug: string) => ({ pk: `WS#${workspaceId}#${kind}SLUG#${slug}`, sk: `${kind}SLUG` }),
  workspaceList: (kind: PromptKind, workspaceId: string) => `WS#${workspaceId}#${kind}`,
};

export type PromptKind = 'PROMPT' | 'PARTIAL';

/**
 * Control table: a rate-limit policy, by workspace and id; listed per workspace on gsi1 (sorted by
 * creation time, so a page is stable while policies are added).
 */
export const rateLimitPolicyKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#RLPOLICY#${id}`, sk: 'RLPOLICY' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#RLPOLICY`,
};

/**
 * State table: one counter per policy, bucket (the hash of its group values) and fixed window. The
 * window's start is in the sort key, so a new window is a new item and an old one expires by TTL.
 */
export const rateCounterKey = {
  item: (policyId: string, bucket: string, windowStart: number) => ({ pk: `RL#${policyId}#${bucket}`, sk: `W#${windowStart}` }),
};

/** Control table: a usage-limit policy (budget), by workspace and id; listed per workspace on gsi1 by creation time. */
export const usageLimitPolicyKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#ULPOLICY#${id}`, sk: 'ULPOLICY' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#ULPOLICY`,
};

/**
 * State table: a budget's usage in one period, one item per bucket. The period's start is in the
 * partition, so a new period is new items (the old ones expire by TTL) and a period's buckets are
 * one Query.
 */
export const usageCounterKey = {
  partition: (policyId: string, periodStart: number) => `UL#${policyId}#P#${periodStart}`,
  item: (policyId: string, periodStart: number, bucket: string) => ({ pk: usageCounterKey.partition(policyId, periodStart), sk: `B#${bucket}` }),
  sortPrefix: 'B#',
};

/**
 * Control table: a file of the gateway's Files API, by workspace and id; listed per workspace on
 * gsi1 by its time-sortable id. Its bytes are an S3 object whose key is made of the two ids only, so
 * nothing a client names (the file name) ever becomes part of a key.
 */
export const fileKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#FILE#${id}`, sk: 'FILE' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#FILE`,
  object: (workspaceId: string, id: string) => `files/${workspaceId}/${id}`,
};

/**
 * Control table: an upload of the Uploads API, by workspace and id, its parts a map inside the item.
 * Its parts' bytes are S3 objects under the workspace's files prefix, keyed by the two ids only (a
 * `gwu_` id never equals a `gwf_` one, so they cannot meet a file's key).
 */
export const uploadKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#UPLOAD#${id}`, sk: 'UPLOAD' }),
  part: (workspaceId: string, uploadId: string, partId: string) => `files/${workspaceId}/${uploadId}/${partId}`,
};

/**
 * A managed batch. Control table: the batch, by workspace and id, listed per workspace on gsi1; and
 * a marker per unfinished batch under one partition, what a starting runtime reads to re-enqueue
 * work whose queue messages were lost. State table: the batch's work, one partition per batch: an
 * item per chunk (its lease and the lines counted in it) and an item per finished line (its result),
 * sorted by number. S3: each chunk's input lines, and results too large for an item.
 */
export const batchKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#BATCH#${id}`, sk: 'BATCH' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#BATCH`,
  unfinishedPartition: 'BATCHES#UNFINISHED',
  work: (workspaceId: string, id: string) => `BATCH#${workspaceId}#${id}`,
  chunk: (workspaceId: string, id: string, chunk: number) => ({ pk: batchKey.work(workspaceId, id), sk: `C#${String(chunk).padStart(6, '0')}` }),
  chunkPrefix: 'C#',
  line: (workspaceId: string, id: string, line: number) => ({ pk: batchKey.work(workspaceId, id), sk: `L#${String(line).padStart(6, '0')}` }),
  linePrefix: 'L#',
  chunkObject: (workspaceId: string, id: string, chunk: number) => `batches/${workspaceId}/${id}/chunks/${chunk}.jsonl`,
  lineObject: (workspaceId: string, id: string, line: number) => `batches/${workspaceId}/${id}/lines/${line}.json`,
  /** What a provider batch's results are read back with, when the provider cannot carry it (its own ids, the answer's mapping). */
  lineIndexObject: (workspaceId: string, id: string) => `batches/${workspaceId}/${id}/line-index.jsonl`,
};

/**
 * A fine-tuning job. Control table: the job, by workspace and id, listed per workspace on gsi1; its
 * events and checkpoints under the job's partition (sorted by time-sortable id); and a marker per
 * unfinished job, what a starting runtime reads to follow jobs whose queue messages were lost.
 */
export const fineTuningJobKey = {
  partition: (workspaceId: string, id: string) => `WS#${workspaceId}#FTJOB#${id}`,
  item: (workspaceId: string, id: string) => ({ pk: fineTuningJobKey.partition(workspaceId, id), sk: 'FTJOB' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#FTJOB`,
  event: (workspaceId: string, id: string, eventId: string) => ({ pk: fineTuningJobKey.partition(workspaceId, id), sk: `E#${eventId}` }),
  eventPrefix: 'E#',
  checkpoint: (workspaceId: string, id: string, checkpointId: string) => ({ pk: fineTuningJobKey.partition(workspaceId, id), sk: `C#${checkpointId}` }),
  checkpointPrefix: 'C#',
  unfinishedPartition: 'FTJOBS#UNFINISHED',
};

/**
 * State table: a stored response (its object, input items and the conversation before it), under
 * its workspace; one too large for an item is an S3 object under `responses/`.
 */
export const responseKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#RESP#${id}`, sk: 'RESP' }),
  object: (workspaceId: string, id: string) => `responses/${workspaceId}/${id}.json`,
};

/** Control table: a registered MCP server, by workspace and id; listed per workspace on gsi1. */
export const mcpServerKey = {
  item: (workspaceId: string, id: string) => ({ pk: `WS#${workspaceId}#MCPSERVER#${id}`, sk: 'MCPSERVER' }),
  workspaceList: (workspaceId: string) => `WS#${workspaceId}#MCPSERVER`,
};

/**
 * Control table: a JWT identity provider, keyed by the SHA-256 of its issuer and audience (one
 * provider per pair, so a token finds its provider with one query on its `iss`); listed per
 * organisation on gsi1 by its time-sortable id.
 */
export const jwtProviderKey = {
  issuer: (issuer: string) => `JWTISS#${sha256Hex(issuer)}`,
  item: (issuer: string, audience: string) => ({ pk: jwtProviderKey.issuer(issuer), sk: `AUD#${sha256Hex(audience)}` }),
  organisationList: (organisationId: string) => `ORG#${organisationId}#JWTPROVIDER`,
};

/** A value inside a key: percent-encoded, so a `#` or `=` in a model name or metadata value cannot move a key's boundaries. */
const keyPart = (value: string) => encodeURIComponent(value);

/**
 * Logs table: the filter index of request logs. A record is listed once per dimension it has (and
 * per metadata key), newest first by its id, under `WS#<ws>#IX#<dimension>=<value>`; the item holds
 * the record's filterable fields and the record is read by its key (docs/logs.md).
 */
export const logIndexKey = {
  partition: (workspaceId: string, dimension: string, value: string) => `WS#${workspaceId}#IX#${keyPart(dimension)}=${keyPart(value)}`,
};

/**
 * Logs table: analytics rollups, one item per hour and view (docs/decisions.md, "Analytics
 * rollups"). A view is a group dimension under an optional filter (`<dimension>=<value>`, or `*`);
 * the sort key is the hour and the group value. Pair items are also indexed on gsi2 with the two
 * dimensions swapped. Cells (every dimension at once) sit under one partition per day.
 */
export const rollupKey = {
  view: (workspaceId: string, filter: { dimension: string; value: string } | undefined, groupBy: string) =>
    `RU#${workspaceId}#${filter ? `${keyPart(filter.dimension)}=${keyPart(filter.value)}` : '*'}#${keyPart(groupBy)}`,
  sort: (hour: string, value: string) => `${hour}#${keyPart(value)}`,
  /** The group value of a view item's sort key. */
  valueOf: (sort: string) => decodeURIComponent(sort.slice(sort.indexOf('#') + 1)),
  cells: (workspaceId: string, day: string) => `RU#${workspaceId}#CELL#${day}`,
  cell: (hour: string, hash: string) => `${hour}#${hash}`,
};
