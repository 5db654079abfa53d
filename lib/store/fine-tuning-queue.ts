/**
 * The fine-tuning queue: a job's moves (`start` it at the provider, `follow` it, pass a `cancel` on),
 * each a message naming the job and nothing else.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { maxDelaySeconds } from './batch-queue';
import { sqsClient } from './clients';

export interface FineTuningMessage {
  kind: 'start' | 'follow' | 'cancel';
  workspace_id: string;
  job_id: string;
}

export async function sendFineTuning(message: FineTuningMessage, delaySeconds = 0): Promise<void> {
  const url = process.env.GATEWAY_FINETUNE_QUEUE_URL;
  if (!url) throw new Error("GATEWAY_FINETUNE_QUEUE_URL is not set; the gateway's functions get it from serverless.yml's provider.environment.");
  await sqsClient().send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: JSON.stringify(message),
      DelaySeconds: Math.max(0, Math.min(maxDelaySeconds, Math.ceil(delaySeconds))),
    }),
  );
}

/** A message's body read back; anything else is a poisoned message, refused so it goes to the dead-letter queue. */
export function readFineTuningMessage(body: string): FineTuningMessage {
  const message = JSON.parse(body) as FineTuningMessage;
  if (!['start', 'follow', 'cancel'].includes(message?.kind) || typeof message.job_id !== 'string' || typeof message.workspace_id !== 'string') {
    throw new Error('Not a fine-tuning message.');
  }
  return message;
}
