/*
 * Feedback on a trace (a score from -10 to 10, a weight, metadata), kept in the logs table as long
 * as the trace's records and read with them. Feedback may come before its trace's records do.
 */
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { feedbackKey } from './keys';
import { queryNewestFirst } from './newest-first';
import { tables } from './tables';

const retentionDays = Number(process.env.GATEWAY_LOG_RETENTION_DAYS ?? 30);

export interface FeedbackFields {
  value: number;
  weight: number;
  metadata: Record<string, unknown>;
}

export interface Feedback extends FeedbackFields {
  object: 'feedback';
  id: string;
  trace_id: string;
  created_at: string;
  updated_at: string;
}

const expiresAt = (now: number) => String(Math.floor(now / 1000) + retentionDays * 86_400);

export async function createFeedback(workspaceId: string, id: string, traceId: string, fields: FeedbackFields): Promise<Feedback> {
  const now = new Date().toISOString();
  const feedback: Feedback = { object: 'feedback', id, trace_id: traceId, ...fields, created_at: now, updated_at: now };
  await dynamoClient().send(
    new PutItemCommand({
      TableName: tables.logs,
      Item: {
        ...marshall(feedbackKey.item(workspaceId, id)),
        gsi1pk: { S: feedbackKey.trace(workspaceId, traceId) },
        gsi1sk: { S: id },
        expiresAt: { N: expiresAt(Date.now()) },
        feedback: { S: JSON.stringify(feedback) },
      },
    }),
  );
  return feedback;
}

/** Changes the fields sent; undefined when the workspace has no feedback with that id. */
export async function updateFeedback(workspaceId: string, id: string, fields: Partial<FeedbackFields>): Promise<Feedback | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const stored = await readFeedback(workspaceId, id);
    if (!stored) return undefined;
    const changed: Feedback = { ...stored.feedback, ...fields, updated_at: new Date().toISOString() };
    // Two updates at once: the second sees the first's text changed and reads again, so neither is lost.
    const written = await writeIfCondition(() =>
      dynamoClient().send(
        new UpdateItemCommand({
          TableName: tables.logs,
          Key: marshall(feedbackKey.item(workspaceId, id)),
          UpdateExpression: 'SET feedback = :changed',
          ConditionExpression: 'feedback = :stored',
          ExpressionAttributeValues: { ':changed': { S: JSON.stringify(changed) }, ':stored': { S: stored.text } },
        }),
      ),
    );
    if (written) return changed;
  }
  throw new Error(`Feedback ${id} kept changing while it was being updated.`);
}

async function readFeedback(workspaceId: string, id: string): Promise<{ feedback: Feedback; text: string } | undefined> {
  const found = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.logs, Key: marshall(feedbackKey.item(workspaceId, id)), ConsistentRead: true }),
  );
  const text = found.Item?.feedback?.S;
  return text === undefined ? undefined : { feedback: JSON.parse(text) as Feedback, text };
}

/** The feedback on a trace, newest first (at most 100). */
export async function listTraceFeedback(workspaceId: string, traceId: string): Promise<Feedback[]> {
  const { items } = await queryNewestFirst({ table: tables.logs, index: 'gsi1', partition: feedbackKey.trace(workspaceId, traceId), limit: 100 });
  return items.map((item) => JSON.parse(item.feedback as string) as Feedback);
}
