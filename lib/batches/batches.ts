/**
 * Managed batches: created from a gateway file, listed, read and cancelled per workspace. The work
 * itself is the workers' (lifecycle.ts, chunk-runner.ts); this module only records what a client
 * asks and tells the lifecycle queue.
 */
import { badRequest, GatewayError, notFound } from '../core/errors';
import { newId } from '../core/ids';
import { findFile } from '../files/stored-files';
import type { Page } from '../store/newest-first';
import { getBatchItem, listBatchItems, putBatchItem, updateBatchItem, type BatchItem, type RequestCounts } from '../store/batches';
import { listChunks } from '../store/batch-work';
import type { InferenceCaller } from '../inference/inference-request';
import { maxBatchFileBytes } from './batch-input';
import { sendLifecycle } from '../store/batch-queue';
import { sealLineOptions, type LineOptions } from '../provider-jobs/sealed-options';
import { batchApiProvider } from './provider-batches';

/** Ids of the gateway's batches: a prefix no provider uses (OpenAI's start `batch_`), so an id alone says whose it is. */
export const gatewayBatchIdPrefix = 'gwb';

export function isGatewayBatchId(id: string): boolean {
  return id.startsWith(`${gatewayBatchIdPrefix}_`);
}

/** How long each completion window gives a batch. `immediate` runs at once, within the same bound. */
export const completionWindows: Record<string, number> = { immediate: 24 * 60 * 60, '24h': 24 * 60 * 60 };

/** The states a batch ends in: nothing moves it on from them. */
export const finalStatuses = ['failed', 'completed', 'expired', 'cancelled'] as const;

export interface CreateBatchInput {
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata: Record<string, string> | null;
}

const storedIdPattern = new RegExp(`^${gatewayBatchIdPrefix}_[0-9a-z]{26}$`);

export async function createBatch(
  caller: InferenceCaller,
  input: CreateBatchInput,
  lineOptions: LineOptions,
  lineMetadata: Record<string, unknown>,
): Promise<BatchItem> {
  const file = await findFile(caller.workspaceId, input.input_file_id);
  if (file.purpose !== 'batch') {
    throw badRequest(
      `File ${file.id} was uploaded with purpose "${file.purpose}"; a batch's input file needs purpose "batch".`,
      'input_file_id',
      'invalid_input_file',
    );
  }
  if (file.bytes > maxBatchFileBytes) {
    throw badRequest(
      `File ${file.id} is ${file.bytes} bytes; a batch's input file may be at most ${maxBatchFileBytes / 1024 / 1024} MB.`,
      'input_file_id',
      'invalid_input_file',
    );
  }
  const now = Math.floor(Date.now() / 1000);
  const item: BatchItem = {
    id: newId(gatewayBatchIdPrefix),
    workspace_id: caller.workspaceId,
    organisation_id: caller.organisationId,
    key_id: caller.keyId,
    endpoint: input.endpoint,
    input_file_id: file.id,
    completion_window: input.completion_window,
    status: 'validating',
    created_at: now,
    expires_at: now + completionWindows[input.completion_window]!,
    request_counts: { total: 0, completed: 0, failed: 0 },
    metadata: input.metadata,
    sealed_options: { ...(await sealLineOptions(caller.workspaceId, lineOptions)) },
    provider_batch: await providerBatchOf(caller.workspaceId, input, lineOptions),
    line_metadata: Object.keys(lineMetadata).length ? lineMetadata : undefined,
  };
  if (!(await putBatchItem(item))) throw new Error(`Batch id ${item.id} was taken; ids are random, so this should not happen.`);
  await sendLifecycle({ kind: 'validate', workspace_id: item.workspace_id, batch_id: item.id });
  return item;
}

export function batchNotFound(id: string) {
  const hint = isGatewayBatchId(id)
    ? ''
    : ` The gateway's batch ids start with ${gatewayBatchIdPrefix}_; for a provider's batch, select the provider (x-gateway-provider).`;
  return notFound(`No batch ${JSON.stringify(id.slice(0, 100))} in this workspace.${hint}`, 'batch_not_found');
}

/** The workspace's batch, or a 404: another workspace's batch is as unknown as one never made. */
export async function findBatch(workspaceId: string, id: string): Promise<BatchItem> {
  const item = storedIdPattern.test(id) ? await getBatchItem(workspaceId, id) : undefined;
  if (!item) throw batchNotFound(id);
  return item;
}

export function listBatches(workspaceId: string, query: { limit: number; after?: string }): Promise<Page<BatchItem>> {
  return listBatchItems(workspaceId, query);
}

/**
 * The batch's request counts: final ones once it ended; while it runs, the sum of its chunks'
 * counts, each line counted once, as lines finish.
 */
export async function currentCounts(item: BatchItem): Promise<RequestCounts> {
  if (item.provider_batch || item.chunk_count === undefined || (finalStatuses as readonly string[]).includes(item.status)) return item.request_counts;
  const chunks = await listChunks(item.workspace_id, item.id);
  return {
    total: item.request_counts.total,
    completed: chunks.reduce((sum, chunk) => sum + chunk.completed, 0),
    failed: chunks.reduce((sum, chunk) => sum + chunk.failed, 0),
  };
}

/** Asks a running batch to stop: `cancelling` now, `cancelled` once its workers have stopped (lifecycle.ts). */
export async function cancelBatch(workspaceId: string, id: string): Promise<BatchItem> {
  const found = await findBatch(workspaceId, id);
  const cancelling = await updateBatchItem(workspaceId, id, {
    set: { status: 'cancelling', cancelling_at: Math.floor(Date.now() / 1000) },
    from: ['validating', 'in_progress'],
  });
  if (!cancelling) {
    const now = await findBatch(workspaceId, id);
    if (now.status === 'cancelling') return now;
    throw new GatewayError(409, `Batch ${found.id} is ${now.status}; only a validating or in-progress batch can be cancelled.`, {
      code: 'batch_not_cancellable',
    });
  }
  await sendLifecycle({ kind: 'settle', workspace_id: workspaceId, batch_id: id });
  return cancelling;
}

async function providerBatchOf(workspaceId: string, batch: CreateBatchInput, lineOptions: LineOptions): Promise<BatchItem['provider_batch']> {
  const provider = await batchApiProvider(workspaceId, batch, lineOptions.options);
  return provider === undefined ? undefined : { provider };
}
