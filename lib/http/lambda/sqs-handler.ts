import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * A Lambda handler for an SQS event source with `ReportBatchItemFailures`: each message is handled
 * on its own, and the ones that fail are reported back, so SQS redelivers only those (and moves a
 * message to its dead-letter queue once it has failed the redrive count).
 */
export function sqsHandler(handle: (record: SQSRecord, context: Context) => Promise<void>) {
  return async function handleMessages(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      try {
        await handle(record, context);
      } catch (error) {
        // The message comes back after its visibility timeout; the reason goes to the function's log.
        console.error(JSON.stringify({ type: 'gateway.queue_failure', message_id: record.messageId, error: String((error as Error)?.stack ?? error) }));
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  };
}
