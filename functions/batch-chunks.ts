import { readBatchMessage } from '../lib/store/batch-queue';
import { runChunk } from '../lib/batches/chunk-runner';
import { sqsHandler } from '../lib/http/lambda/sqs-handler';

/** The chunk queue: run a chunk of a batch's lines through the core. */
export const handler = sqsHandler(async (record, context) => {
  const message = readBatchMessage(record.body);
  if (message.kind !== 'chunk') throw new Error(`A ${message.kind} message on the chunk queue.`);
  await runChunk({ workspaceId: message.workspace_id, batchId: message.batch_id, chunk: message.chunk, remainingMs: () => context.getRemainingTimeInMillis() });
});
