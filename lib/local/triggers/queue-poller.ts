/**
 * Plays Lambda's SQS event source mapping for the local runtime: polls each queue a function's
 * `sqs` event names, invokes the function's handler with a real `SQSEvent` of the messages received,
 * and deletes the messages that did not fail (all of them unless the handler threw, or only those
 * it did not name in `batchItemFailures` when the event reports item failures). A message that is
 * not deleted comes back when its visibility timeout ends, and the emulator moves it to the
 * dead-letter queue after the redrive policy's receive count, as SQS does on AWS.
 */
import { randomUUID } from 'node:crypto';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { sqsClient } from '../../store/clients';
import { lambdaContext, type LambdaHandler } from '../lambda/server';
import type { ServerlessFunction, ServerlessQueueSource } from '../template/serverless-config';

export interface QueuePollerOptions {
  service: string;
  stage: string;
  region: string;
  sources: { source: ServerlessQueueSource; fn: ServerlessFunction; queueUrl: string; queueArn: string; concurrency: number }[];
  handlerFor(name: string): LambdaHandler | Promise<LambdaHandler>;
  /**
   * The visibility timeout of each receive, when set: on AWS a queue's must be at least its
   * function's timeout (15 minutes for the batch workers), which would leave a failed message away
   * that long locally too.
   */
  visibilitySeconds?: number;
}

export interface QueuePollers {
  stop(): Promise<void>;
}

/**
 * A receive waits this long for messages. Each empty receive costs the runtime's process about a
 * millisecond of SDK work that requests served meanwhile wait behind, so a longer wait is cheaper;
 * but a receive is never cut short: the emulator would still hand the next message to a receive
 * whose caller had gone, hiding it for its visibility timeout. A stop waits for the receives under
 * way, so the wait stays within the stop's grace.
 */
const waitSeconds = 2;
/** How long a stop waits for the receives and invocations under way. */
const stopGraceMs = 2_500;

export function startQueuePollers(options: QueuePollerOptions): QueuePollers {
  let stopping = false;
  const loops: Promise<void>[] = [];
  for (const entry of options.sources) {
    for (let worker = 0; worker < entry.concurrency; worker++) {
      loops.push(
        (async () => {
          while (!stopping) {
            try {
              await pollOnce(entry, options, () => stopping);
            } catch (error) {
              if (stopping) break;
              console.error(`The ${entry.fn.name} queue poller failed; it tries again in a second`, error);
              await new Promise((resolve) => setTimeout(resolve, 1_000));
            }
          }
        })(),
      );
    }
  }
  return {
    async stop() {
      stopping = true;
      // Invocations still running after the grace are left, as when a Lambda dies mid-work: their
      // messages come back and the workers' idempotent writes finish the work on the next start.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(loops), new Promise((resolve) => (timer = setTimeout(resolve, stopGraceMs)))]);
      clearTimeout(timer);
    },
  };
}

async function pollOnce(entry: QueuePollerOptions['sources'][number], options: QueuePollerOptions, stopping: () => boolean): Promise<void> {
  const { source, fn, queueUrl, queueArn } = entry;
  const received = await sqsClient().send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: Math.min(10, source.batchSize),
      WaitTimeSeconds: waitSeconds,
      VisibilityTimeout: options.visibilitySeconds,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  const messages = received.Messages ?? [];
  if (messages.length === 0 || stopping()) return;
  const event: SQSEvent = { Records: messages.map((message) => sqsRecord(message, queueArn, options.region)) };
  const handler = await options.handlerFor(fn.name);
  const context = lambdaContext(options.service, options.stage, fn, randomUUID(), fn.timeoutSeconds * 1000);
  let failed: Set<string>;
  try {
    const answer = (await handler(event, context)) as SQSBatchResponse | undefined;
    failed = new Set(source.reportsItemFailures ? (answer?.batchItemFailures ?? []).map((failure) => failure.itemIdentifier) : []);
  } catch (error) {
    console.error(`Function ${fn.name} failed on ${messages.length} queue messages; they come back after their visibility timeout`, error);
    return;
  }
  const done = messages.filter((message) => !failed.has(message.MessageId ?? ''));
  if (done.length === 0) return;
  await sqsClient().send(
    new DeleteMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: done.map((message, index) => ({ Id: String(index), ReceiptHandle: message.ReceiptHandle })),
    }),
  );
}

function sqsRecord(message: Message, queueArn: string, region: string): SQSEvent['Records'][number] {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? '000000000000',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}
