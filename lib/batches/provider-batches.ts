/**
 * Batches that run at their provider's batch API (`completion_window: "24h"` with a provider that
 * has one, at about half the price of live calls): after the gateway has checked the input, it
 * uploads it to the provider and creates the provider's batch; a lifecycle message then follows it,
 * delayed, with backoff, mirroring its status and counts onto the gateway's batch; when the provider
 * is done, its output and error files are copied into gateway files, so the batch reads as a managed
 * one does.
 */
import { newId } from '../core/ids';
import { FileWriter } from '../files/file-writer';
import { gatewayFileIdPrefix } from '../files/provider-selection';
import { storedCatalog, type ProviderCatalog } from '../catalog/providers';
import type { InferenceOptions } from '../inference/inference-request';
import { sendLifecycle } from '../store/batch-queue';
import { clearUnfinished, getBatchItem, updateBatchItem, type BatchItem, type BatchStatus } from '../store/batches';
import { streamFileObject } from '../store/file-objects';
import { openLineOptions } from '../provider-jobs/sealed-options';
import { firstFollowSeconds, followDelay, providerSilenceLimitSeconds } from '../provider-jobs/follow';
import { batchApiOf } from './batch-apis';
import type { ProviderBatchApi, ProviderBatchState } from './provider-batch-api';
import type { EncryptedBlob } from '../secrets/envelope';
import { BatchInputRejected, maxReportedErrors } from './batch-input';

/**
 * The provider whose batch API runs a batch, or undefined when the gateway runs it: only a `24h`
 * batch whose lines all go to one provider unchanged — named by `x-gateway-provider`, or a catalog
 * entry of such a provider at its own host — and whose endpoint that API takes. A config may route
 * each line elsewhere, and a custom host is a server whose batch API the gateway cannot know.
 */
export async function batchApiProvider(
  workspaceId: string,
  batch: { completion_window: string; endpoint: string },
  options: InferenceOptions,
  catalog: ProviderCatalog = storedCatalog,
): Promise<string | undefined> {
  if (batch.completion_window !== '24h' || options.config.kind !== 'headers') return undefined;
  const { provider, customHost, virtualKey } = options.credentials;
  if (customHost) return undefined;
  const slug = virtualKey ?? (provider?.startsWith('@') ? provider : undefined);
  let name = provider;
  if (slug !== undefined) {
    const entry = await catalog.find(workspaceId, slug);
    // An Azure entry's resource and api-version are the entry's, which the resource-level calls do not read.
    if (!entry || entry.custom_host || entry.provider === 'azure-openai') return undefined;
    name = entry.provider;
  }
  return name && batchApiOf(name, batch.endpoint) ? name : undefined;
}

const now = () => Math.floor(Date.now() / 1000);

/** Sends the checked input to the provider and creates its batch; the batch is `in_progress` from then on. */
export async function startProviderBatch(batch: BatchItem, total: number): Promise<void> {
  const lineOptions = await openLineOptions(batch.workspace_id, batch.sealed_options as unknown as EncryptedBlob);
  let providerBatchId = batch.provider_batch?.batch_id;
  let inputFileId = batch.provider_batch?.input_file_id;
  // A message delivered again after the provider's batch was recorded does not create a second one;
  // a worker that dies between the provider's answer and that record leaves one batch there unrecorded.
  // The input is read whole (at most 200 MB): both batch APIs take it in one request.
  if (!providerBatchId) {
    const content = await streamFileObject(batch.workspace_id, batch.input_file_id);
    if (!content) throw new Error(`The input file ${batch.input_file_id} is gone.`);
    const pieces: Buffer[] = [];
    for await (const piece of content) pieces.push(piece as Buffer);
    try {
      ({ batchId: providerBatchId, inputFileId } = await apiOf(batch).submit(batch, lineOptions, Buffer.concat(pieces)));
    } catch (error) {
      if (!(error instanceof BatchInputRejected)) throw error;
      const failed = await updateBatchItem(batch.workspace_id, batch.id, {
        set: { status: 'failed', failed_at: now(), errors: error.errors.slice(0, maxReportedErrors) },
        remove: ['sealed_options'],
        from: ['validating'],
      });
      if (failed) await clearUnfinished(batch.id);
      return;
    }
  }
  const recorded = { ...batch.provider_batch!, input_file_id: inputFileId, batch_id: providerBatchId, follows: 0 };
  const started = await updateBatchItem(batch.workspace_id, batch.id, {
    set: { status: 'in_progress', in_progress_at: now(), provider_batch: recorded, request_counts: { total, completed: 0, failed: 0 } },
    from: ['validating'],
  });
  if (!started) {
    // Cancelled while it was sent: record the provider's batch and cancel it there too; following
    // it ends the gateway's batch as the provider ends its own.
    await updateBatchItem(batch.workspace_id, batch.id, { set: { provider_batch: recorded } });
    await apiOf(batch).cancel(batch, lineOptions, providerBatchId);
    await sendLifecycle({ kind: 'follow', workspace_id: batch.workspace_id, batch_id: batch.id }, firstFollowSeconds());
    return;
  }
  await sendLifecycle({ kind: 'follow', workspace_id: batch.workspace_id, batch_id: batch.id }, followDelay(0));
}

function apiOf(batch: BatchItem): ProviderBatchApi {
  const api = batch.provider_batch && batchApiOf(batch.provider_batch.provider, batch.endpoint);
  if (!api) throw new Error(`Batch ${batch.id} names no provider batch API.`);
  return api;
}

/** Looks at the provider's batch: mirrors it, copies its files home once it ended, or looks again later. */
export async function followProviderBatch(workspaceId: string, batchId: string): Promise<void> {
  const batch = await getBatchItem(workspaceId, batchId);
  const providerBatchId = batch?.provider_batch?.batch_id;
  if (!batch || !providerBatchId || !batch.sealed_options || !['in_progress', 'finalizing', 'cancelling'].includes(batch.status)) return;
  const lineOptions = await openLineOptions(workspaceId, batch.sealed_options as unknown as EncryptedBlob);
  const follows = (batch.provider_batch?.follows ?? 0) + 1;
  let state: ProviderBatchState;
  try {
    state = await apiOf(batch).look(batch, lineOptions, providerBatchId);
  } catch (error) {
    return providerUnanswered(batch, follows, error);
  }
  if (state.ending) return copyHome(batch, state, state.ending);
  await updateBatchItem(workspaceId, batchId, {
    set: { provider_batch: { ...batch.provider_batch!, follows }, request_counts: mirroredCounts(batch, state) },
    remove: ['provider_unanswered_since'],
    from: ['in_progress', 'cancelling'],
  });
  await sendLifecycle({ kind: 'follow', workspace_id: workspaceId, batch_id: batchId }, followDelay(follows));
}

/**
 * A look at the provider's batch failed (the provider errs, or cannot be reached): looked at again
 * later, with the same backoff, until the provider has failed to answer for longer than the limit;
 * then the batch fails with an error that says so. Its provider batch may still finish there.
 */
async function providerUnanswered(batch: BatchItem, follows: number, error: unknown): Promise<void> {
  const since = batch.provider_unanswered_since ?? now();
  const reason = error instanceof Error ? error.message : String(error);
  if (now() - since >= providerSilenceLimitSeconds()) {
    const failed = await updateBatchItem(batch.workspace_id, batch.id, {
      set: {
        status: 'failed',
        failed_at: now(),
        errors: [
          {
            code: 'provider_unanswered',
            message: `The provider did not answer about batch ${batch.provider_batch?.batch_id} for ${now() - since} s (the limit is ${providerSilenceLimitSeconds()} s); its last answer: ${reason}`,
            param: null,
            line: null,
          },
        ],
      },
      remove: ['sealed_options'],
      from: ['in_progress', 'finalizing', 'cancelling'],
    });
    if (failed) await clearUnfinished(batch.id);
    return;
  }
  await updateBatchItem(batch.workspace_id, batch.id, {
    set: { provider_batch: { ...batch.provider_batch!, follows } },
    setIfAbsent: { provider_unanswered_since: since },
    from: ['in_progress', 'cancelling'],
  });
  await sendLifecycle({ kind: 'follow', workspace_id: batch.workspace_id, batch_id: batch.id }, followDelay(follows));
}

/** A cancel reaches the provider's batch, which is then followed until the provider says it is cancelled. */
export async function cancelAtProvider(batch: BatchItem): Promise<void> {
  const providerBatchId = batch.provider_batch?.batch_id;
  if (providerBatchId && batch.sealed_options) {
    const lineOptions = await openLineOptions(batch.workspace_id, batch.sealed_options as unknown as EncryptedBlob);
    await apiOf(batch).cancel(batch, lineOptions, providerBatchId);
    await sendLifecycle({ kind: 'follow', workspace_id: batch.workspace_id, batch_id: batch.id }, firstFollowSeconds());
    return;
  }
  // Never sent to the provider: it ends here, with nothing run.
  await updateBatchItem(batch.workspace_id, batch.id, { set: { status: 'cancelled', cancelled_at: now() }, remove: ['sealed_options'], from: ['cancelling'] });
  await clearUnfinished(batch.id);
}

function mirroredCounts(batch: BatchItem, state: ProviderBatchState) {
  const counts = state.request_counts ?? {};
  // The gateway counted the lines it sent; a provider may say 0 until it has read them.
  return { total: Math.max(batch.request_counts.total, counts.total ?? 0), completed: counts.completed ?? 0, failed: counts.failed ?? 0 };
}

/** Copies the provider's results into gateway files (ids fixed first) and ends the batch as the provider did. */
async function copyHome(batch: BatchItem, state: ProviderBatchState, ending: BatchStatus): Promise<void> {
  const { workspace_id: workspaceId, id } = batch;
  const planned = await updateBatchItem(workspaceId, id, {
    setIfAbsent: { planned_output_file_id: newId(gatewayFileIdPrefix), planned_error_file_id: newId(gatewayFileIdPrefix) },
  });
  if (!planned) return;
  const lineOptions = await openLineOptions(workspaceId, batch.sealed_options as unknown as EncryptedBlob);
  const output = new FileWriter(workspaceId, { id: planned.planned_output_file_id!, purpose: 'batch_output', filename: `${id}_output.jsonl` });
  const errors = new FileWriter(workspaceId, { id: planned.planned_error_file_id!, purpose: 'batch_output', filename: `${id}_error.jsonl` });
  let completed = 0;
  let failed = 0;
  if (ending !== 'failed') {
    for await (const line of apiOf(batch).results(batch, lineOptions, batch.provider_batch!.batch_id!, state)) {
      if (line.ok) completed++;
      else failed++;
      await (line.ok ? output : errors).write(`${line.text}\n`);
    }
  }
  // As for a managed batch: an output file whenever lines ran (it may be empty), an error file when one failed.
  const outputFile = ending !== 'failed' ? await output.close() : undefined;
  const errorFile = failed > 0 ? await errors.close() : undefined;
  const counts = ending === 'failed' ? mirroredCounts(batch, state) : { total: batch.request_counts.total, completed, failed };
  await updateBatchItem(workspaceId, id, {
    set: {
      status: ending,
      [`${ending}_at`]: now(),
      output_file_id: outputFile?.id,
      error_file_id: errorFile?.id,
      request_counts: counts,
      ...(state.errors?.length ? { errors: state.errors } : {}),
    },
    remove: ['sealed_options'],
    from: ['in_progress', 'finalizing', 'cancelling'],
  });
  await clearUnfinished(id);
}
