/**
 * The background responses queue: each message names a response stored `queued`, which the worker
 * runs. The message carries nothing else: the stored item is the source of truth.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from './clients';

export interface BackgroundResponseMessage {
  workspace_id: string;
  response_id: string;
}

export async function sendBackgroundResponse(message: BackgroundResponseMessage): Promise<void> {
  const url = process.env.GATEWAY_RESPONSES_QUEUE_URL;
  if (!url) throw new Error("GATEWAY_RESPONSES_QUEUE_URL is not set; the gateway's functions get it from serverless.yml's provider.environment.");
  await sqsClient().send(new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(message) }));
}

/** A message's body read back; anything else is a poisoned message, refused so it goes to the dead-letter queue. */
export function readBackgroundResponseMessage(body: string): BackgroundResponseMessage {
  const message = JSON.parse(body) as BackgroundResponseMessage;
  if (typeof message?.workspace_id !== 'string' || typeof message.response_id !== 'string') throw new Error('Not a background response message.');
  return message;
}
