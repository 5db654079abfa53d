/**
 * A batch's moves, made by the lifecycle worker: `validate` checks the input file and cuts it into
 * chunks (in_progress), `settle` ends a batch whose chunks are done (finalizing → completed), whose
 * window has passed (expired) or that was cancelled (cancelled), writing its output and error files.
 * Every move is a conditional update from the state it leaves, and what it writes has ids chosen up
 * front, so a message delivered twice or a worker that dies half-way converges on the same batch.
 */
import { newId } from '../core/ids';
import { FileWriter } from '../files/file-writer';
import { gatewayFileIdPrefix } from '../files/provider-selection';
import { streamFileObject } from '../store/file-objects';
import { clearUnfinished, getBatchItem, updateBatchItem, type BatchItem, type BatchStatus } from '../store/batches';
import {
  linesWithResults,
  listChunks,
  putChunkLines,
  putChunkPlans,
  readChunkLines,
  readLineResults,
  type ChunkPlan,
  type ChunkState,
} from '../store/batch-work';
import { fileLines } from '../core/text-lines';
import { BatchInputChecker, type BatchLine } from './batch-input';
import { sendChunks, sendLifecycle } from '../store/batch-queue';
import { finalStatuses } from './batches';
import { errorLine, readChunkRequests } from './line-results';
import { cancelAtProvider, startProviderBatch } from './provider-batches';

/** Lines per chunk: one chunk message, one lease, one S3 object of input. */
export function chunkLines(): number {
  const configured = Number(process.env.GATEWAY_BATCH_CHUNK_LINES);
  return Number.isInteger(configured) && configured > 0 ? configured : 100;
}

/** How long a settle waits before looking again at chunks whose workers still hold them. */
const settleRetrySeconds = 5;
/** Line results are kept this long after a batch's window, then expire (the state table's TTL). */
const workRetentionSeconds = 7 * 24 * 60 * 60;

export function workExpiresAt(batch: BatchItem): number {
  return batch.expires_at + workRetentionSeconds;
}

const now = () => Math.floor(Date.now() / 1000);

export async function validateBatch(workspaceId: string, batchId: string): Promise<void> {
  const batch = await getBatchItem(workspaceId, batchId);
  if (!batch) return;
  if (batch.status === 'cancelling') return settleBatch(workspaceId, batchId);
  if (batch.status !== 'validating') return;

  const content = await streamFileObject(workspaceId, batch.input_file_id);
  if (!content) {
    await failBatch(batch, [
      {
        code: 'input_file_missing',
        message: `The input file ${batch.input_file_id} was deleted before the batch started.`,
        param: 'input_file_id',
        line: null,
      },
    ]);
    return;
  }
  const checker = new BatchInputChecker(batch.endpoint);
  const plans: ChunkPlan[] = [];
  const size = chunkLines();
  let pending: BatchLine[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    const chunk = plans.length;
    plans.push({ chunk, first: pending[0]!.line, lines: pending.length });
    // Written while the file is read, so a 200 MB file is never held whole; an invalid file's
    // chunks are never planned, and expire with the batch's other objects.
    await putChunkLines(workspaceId, batchId, chunk, Buffer.from(`${pending.map((line) => JSON.stringify(line)).join('\n')}\n`));
    pending = [];
  };
  // A batch the provider runs needs no chunks: the check is all the gateway does with its lines.
  const chunked = batch.provider_batch === undefined;
  for await (const { text, line } of fileLines(content)) {
    const request = checker.check(text, line);
    if (checker.errors.length > 0 || !chunked) continue;
    if (request) pending.push(request);
    if (pending.length === size) await flush();
  }
  const errors = checker.finish();
  if (errors.length > 0) {
    await failBatch(batch, errors);
    return;
  }
  if (!chunked) return startProviderBatch(batch, checker.requestCount);
  await flush();
  await putChunkPlans(workspaceId, batchId, plans, workExpiresAt(batch));
  await sendChunks(plans.map((plan) => ({ kind: 'chunk', workspace_id: workspaceId, batch_id: batchId, chunk: plan.chunk })));
  const started = await updateBatchItem(workspaceId, batchId, {
    set: { status: 'in_progress', in_progress_at: now(), chunk_count: plans.length, request_counts: { total: checker.requestCount, completed: 0, failed: 0 } },
    from: ['validating'],
  });
  // Cancelled while it was read: the chunks see it and stop; settling ends it.
  if (!started) await sendLifecycle({ kind: 'settle', workspace_id: workspaceId, batch_id: batchId });
}

async function failBatch(batch: BatchItem, errors: BatchItem['errors']): Promise<void> {
  await updateBatchItem(batch.workspace_id, batch.id, {
    set: { status: 'failed', failed_at: now(), errors },
    remove: ['sealed_options'],
    from: ['validating'],
  });
  await clearUnfinished(batch.id);
}

/**
 * Ends the batch when nothing more will run for it. Called by the chunk that finishes last, by a
 * cancel, by a chunk that finds the window passed, and on start for unfinished batches; a call
 * that finds work still running is a no-op (or, for a batch that must stop, a look again later).
 */
export async function settleBatch(workspaceId: string, batchId: string): Promise<void> {
  const batch = await getBatchItem(workspaceId, batchId);
  if (!batch) return;
  if ((finalStatuses as readonly string[]).includes(batch.status)) {
    await clearUnfinished(batch.id);
    return;
  }
  if (batch.status === 'validating') return;
  if (batch.provider_batch) {
    // The provider's batch ends it (followProviderBatch); a cancel is passed on to the provider.
    if (batch.status === 'cancelling') await cancelAtProvider(batch);
    return;
  }
  if (batch.status === 'finalizing') return finalize(batch, batch.ending ?? 'completed');

  const chunks = await listChunks(workspaceId, batchId);
  const working = chunks.some((chunk) => !chunk.finished && chunk.lease_until !== undefined && chunk.lease_until > Date.now());
  const mustStop = batch.status === 'cancelling' || now() >= batch.expires_at;
  if (mustStop && working) {
    await sendLifecycle({ kind: 'settle', workspace_id: workspaceId, batch_id: batchId }, settleRetrySeconds);
    return;
  }
  if (batch.status === 'cancelling') return finalize(batch, 'cancelled');
  const allFinished = batch.chunk_count !== undefined && chunks.length === batch.chunk_count && chunks.every((chunk) => chunk.finished);
  if (allFinished) return finalize(batch, 'completed');
  if (mustStop) return finalize(batch, 'expired');
}

type Ending = 'completed' | 'expired' | 'cancelled';

/**
 * Writes the output and error files and ends the batch. The files' ids are fixed on the batch
 * before either is written, so a finalization that runs twice writes the same two files.
 */
async function finalize(batch: BatchItem, ending: Ending): Promise<void> {
  const { workspace_id: workspaceId, id } = batch;
  let current: BatchItem | undefined = batch;
  if (ending !== 'cancelled' && batch.status === 'in_progress') {
    current = await updateBatchItem(workspaceId, id, { set: { status: 'finalizing', finalizing_at: now(), ending }, from: ['in_progress'] });
    if (!current) return; // another worker moved it first
  }
  current = await updateBatchItem(workspaceId, id, {
    setIfAbsent: { planned_output_file_id: newId(gatewayFileIdPrefix), planned_error_file_id: newId(gatewayFileIdPrefix) },
    from: [current.status],
  });
  if (!current) return;

  // The files are written as the results are read, never held whole (50,000 answers may be GBs).
  const outputWriter = new FileWriter(workspaceId, { id: current.planned_output_file_id!, purpose: 'batch_output', filename: `${id}_output.jsonl` });
  const errorWriter = new FileWriter(workspaceId, { id: current.planned_error_file_id!, purpose: 'batch_output', filename: `${id}_error.jsonl` });
  let completed = 0;
  let failed = 0;
  for await (const result of readLineResults(workspaceId, id)) {
    if (result.ok) completed++;
    else failed++;
    await (result.ok ? outputWriter : errorWriter).write(`${result.text}\n`);
  }
  if (ending === 'expired') {
    for (const line of await unfinishedLines(current)) {
      await errorWriter.write(`${errorLine(line.custom_id, 'batch_expired', 'The batch expired before this request was run.')}\n`);
      failed++;
    }
  }
  const stamp = now();
  const outputFile = await outputWriter.close();
  const errorFile = errorWriter.written > 0 ? await errorWriter.close() : undefined;
  const endedAt: Partial<Record<`${Ending}_at`, number>> = { [`${ending}_at`]: stamp };
  await updateBatchItem(workspaceId, id, {
    set: {
      status: ending as BatchStatus,
      ...endedAt,
      output_file_id: outputFile.id,
      error_file_id: errorFile?.id,
      request_counts: { total: current.request_counts.total, completed, failed },
    },
    remove: ['sealed_options'],
    from: [ending === 'cancelled' ? 'cancelling' : 'finalizing'],
  });
  await clearUnfinished(id);
}

/** The requests of a batch that have no result: what an expired batch reports in its error file. */
async function unfinishedLines(batch: BatchItem): Promise<{ line: number; custom_id: string }[]> {
  const chunks: ChunkState[] = await listChunks(batch.workspace_id, batch.id);
  const missing: { line: number; custom_id: string }[] = [];
  for (const chunk of chunks) {
    if (chunk.done.size === chunk.lines) continue;
    const done = await linesWithResults(batch.workspace_id, batch.id, chunk.first, chunk.first + chunk.lines - 1);
    for (const request of readChunkRequests(await readChunkLines(batch.workspace_id, batch.id, chunk.chunk))) {
      if (!done.has(request.line)) missing.push({ line: request.line, custom_id: request.custom_id });
    }
  }
  return missing;
}

/**
 * Re-enqueues the work of every unfinished batch: what a starting runtime does, since queue messages
 * can be lost (the local queue emulator keeps none across restarts) while DynamoDB keeps the batches.
 * A message sent for work that is not lost is harmless: every move is idempotent.
 */
export async function resumeBatch(workspaceId: string, batchId: string): Promise<void> {
  const batch = await getBatchItem(workspaceId, batchId);
  if (!batch) return clearUnfinished(batchId);
  if (batch.status === 'validating') return sendLifecycle({ kind: 'validate', workspace_id: workspaceId, batch_id: batchId });
  if (batch.provider_batch) return sendLifecycle({ kind: batch.status === 'cancelling' ? 'settle' : 'follow', workspace_id: workspaceId, batch_id: batchId });
  if (batch.status === 'in_progress') {
    const open = (await listChunks(workspaceId, batchId)).filter((chunk) => !chunk.finished);
    await sendChunks(open.map((chunk) => ({ kind: 'chunk', workspace_id: workspaceId, batch_id: batchId, chunk: chunk.chunk })));
  }
  await sendLifecycle({ kind: 'settle', workspace_id: workspaceId, batch_id: batchId });
}
