/**
 * The batch queues. The lifecycle queue carries a batch's moves (`validate` its input, `settle` it
 * once its chunks are done, cancelled or out of time, `follow` a batch that runs at its provider);
 * the chunk queue carries one message per chunk
 * of lines to run. A message names its batch and never carries a line, a credential or an answer:
 * DynamoDB and S3 hold those.
 */
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from './clients';

type BatchRef = { workspace_id: string; batch_id: string };
export type LifecycleMessage = ({ kind: 'validate' } & BatchRef) | ({ kind: 'settle' } & BatchRef) | ({ kind: 'follow' } & BatchRef);
export type ChunkMessage = { kind: 'chunk'; chunk: number } & BatchRef;
export type BatchMessage = LifecycleMessage | ChunkMessage;

/** SQS's longest message delay. */
export const maxDelaySeconds = 900;

function queueUrl(variable: 'GATEWAY_BATCH_QUEUE_URL' | 'GATEWAY_BATCH_CHUNK_QUEUE_URL'): string {
  const url = process.env[variable];
  if (!url) throw new Error(`${variable} is not set; the gateway's functions get it from serverless.yml's provider.environment.`);
  return url;
}

export async function sendLifecycle(message: LifecycleMessage, delaySeconds = 0): Promise<void> {
  await sqsClient().send(
    new SendMessageCommand({ QueueUrl: queueUrl('GATEWAY_BATCH_QUEUE_URL'), MessageBody: JSON.stringify(message), DelaySeconds: clampDelay(delaySeconds) }),
  );
}

/** Sends chunk messages ten to a call (SQS's most); a message SQS refuses fails the whole send, to be retried by the caller's redelivery. */
export async function sendChunks(messages: readonly ChunkMessage[], delaySeconds = 0): Promise<void> {
  for (let start = 0; start < messages.length; start += 10) {
    const entries = messages.slice(start, start + 10).map((message, index) => ({
      Id: String(index),
      MessageBody: JSON.stringify(message),
      DelaySeconds: clampDelay(delaySeconds),
    }));
    const result = await sqsClient().send(new SendMessageBatchCommand({ QueueUrl: queueUrl('GATEWAY_BATCH_CHUNK_QUEUE_URL'), Entries: entries }));
    if (result.Failed?.length) throw new Error(`SQS refused ${result.Failed.length} chunk messages: ${result.Failed[0]?.Message ?? result.Failed[0]?.Code}`);
  }
}

function clampDelay(seconds: number): number {
  return Math.max(0, Math.min(maxDelaySeconds, Math.ceil(seconds)));
}

/** A message's body read back; anything else is a poisoned message, refused so it goes to the dead-letter queue. */
export function readBatchMessage(body: string): BatchMessage {
  const message = JSON.parse(body) as BatchMessage;
  if (typeof message?.batch_id !== 'string' || typeof message.workspace_id !== 'string') throw new Error('Not a batch message: it names no batch.');
  if (message.kind === 'chunk' ? !Number.isInteger(message.chunk) : !['validate', 'settle', 'follow'].includes(message.kind)) {
    throw new Error(`Not a batch message: kind ${JSON.stringify(message.kind)}.`);
  }
  return message;
}
