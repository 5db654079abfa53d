/**
 * What becomes of a batch message that failed its redrive count: a chunk's lines that have no
 * result are recorded as failed and the chunk is finished, so its batch still ends; a validation
 * that keeps failing fails its batch. A settle that keeps failing is left to the next start's
 * resume (the batch is still listed as unfinished).
 */
import { clearUnfinished, getBatchItem, updateBatchItem, type BatchItem } from '../store/batches';
import { countLine, finishChunk, getChunk, linesWithResults, putLineResult, readChunkLines } from '../store/batch-work';
import { readBatchMessage, sendLifecycle, type BatchMessage } from '../store/batch-queue';
import { workExpiresAt } from './lifecycle';
import { errorLine, readChunkRequests } from './line-results';

export async function handleDeadLetter(body: string): Promise<void> {
  const message = readOrDrop(body);
  if (!message) return;
  const batch = await getBatchItem(message.workspace_id, message.batch_id);
  if (!batch) return;
  if (message.kind === 'validate') {
    const failed = await updateBatchItem(batch.workspace_id, batch.id, {
      set: {
        status: 'failed',
        failed_at: Math.floor(Date.now() / 1000),
        errors: [
          { code: 'validation_failed', message: 'The input file could not be read or split into chunks; try the batch again.', param: null, line: null },
        ],
      },
      remove: ['sealed_options'],
      from: ['validating'],
    });
    if (failed) await clearUnfinished(batch.id);
    return;
  }
  // A settle or follow that keeps failing is left to the next start's resume (the batch is still listed as unfinished).
  if (message.kind !== 'chunk') return;
  await giveUpChunk(batch, message.chunk);
}

async function giveUpChunk(batch: BatchItem, chunkNumber: number): Promise<void> {
  const chunk = await getChunk(batch.workspace_id, batch.id, chunkNumber);
  if (!chunk || chunk.finished) return;
  const results = await linesWithResults(batch.workspace_id, batch.id, chunk.first, chunk.first + chunk.lines - 1);
  for (const request of readChunkRequests(await readChunkLines(batch.workspace_id, batch.id, chunkNumber))) {
    const ok = results.get(request.line);
    if (ok === undefined) {
      const text = errorLine(request.custom_id, 'batch_chunk_failed', 'The worker running this request failed repeatedly; the request was given up.');
      await putLineResult(batch.workspace_id, batch.id, { line: request.line, custom_id: request.custom_id, ok: false, text }, workExpiresAt(batch));
    }
    await countLine(batch.workspace_id, batch.id, chunkNumber, request.line, ok ?? false);
  }
  await finishChunk(batch.workspace_id, batch.id, chunkNumber);
  await sendLifecycle({ kind: 'settle', workspace_id: batch.workspace_id, batch_id: batch.id });
}

/** A message that is not a batch's cannot be given up for anyone: it is dropped, and said so. */
function readOrDrop(body: string): BatchMessage | undefined {
  try {
    return readBatchMessage(body);
  } catch (error) {
    console.error(JSON.stringify({ type: 'gateway.batch_dead_letter', dropped: true, reason: (error as Error).message }));
    return undefined;
  }
}
