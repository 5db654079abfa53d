import { sqsHandler } from '../lib/http/lambda/sqs-handler';
import { runBackgroundResponse } from '../lib/responses/background';
import { readBackgroundResponseMessage } from '../lib/store/responses-queue';

/** The responses queue: runs a background response through the core, once. */
export const handler = sqsHandler(async (record) => {
  const message = readBackgroundResponseMessage(record.body);
  await runBackgroundResponse(message.workspace_id, message.response_id);
});
