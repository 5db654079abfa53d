import { handleDeadLetter } from '../lib/batches/dead-letters';
import { sqsHandler } from '../lib/http/lambda/sqs-handler';

/** The batch queues' dead-letter queues: a poisoned chunk's lines are recorded as failed so its batch still ends. */
export const handler = sqsHandler(async (record) => handleDeadLetter(record.body));
