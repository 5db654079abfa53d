import { readBatchMessage } from '../lib/store/batch-queue';
import { settleBatch, validateBatch } from '../lib/batches/lifecycle';
import { followProviderBatch } from '../lib/batches/provider-batches';
import { sqsHandler } from '../lib/http/lambda/sqs-handler';

/** The lifecycle queue: validate a batch's input and cut it into chunks (or send it to its provider); settle a batch whose work is done; follow a batch its provider runs. */
export const handler = sqsHandler(async (record) => {
  const message = readBatchMessage(record.body);
  if (message.kind === 'validate') await validateBatch(message.workspace_id, message.batch_id);
  else if (message.kind === 'settle') await settleBatch(message.workspace_id, message.batch_id);
  else if (message.kind === 'follow') await followProviderBatch(message.workspace_id, message.batch_id);
  else throw new Error('A chunk message on the lifecycle queue.');
});
