import { cancelAtProvider, followJob, startJob } from '../lib/fine-tuning/lifecycle';
import { sqsHandler } from '../lib/http/lambda/sqs-handler';
import { readFineTuningMessage } from '../lib/store/fine-tuning-queue';

/** The fine-tuning queue: start a job at its provider, follow it, pass a cancel on. */
export const handler = sqsHandler(async (record) => {
  const message = readFineTuningMessage(record.body);
  if (message.kind === 'start') await startJob(message.workspace_id, message.job_id);
  else if (message.kind === 'follow') await followJob(message.workspace_id, message.job_id);
  else await cancelAtProvider(message.workspace_id, message.job_id);
});
