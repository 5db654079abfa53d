import { GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { fineTuningJobKey } from './keys';
import { queryNewestFirst, type Page } from './newest-first';
import { updateStateItem, type StateUpdate } from './state-update';
import { tables } from './tables';
import { clearUnfinished, listUnfinished, markUnfinished } from './unfinished-work';

export type FineTuningStatus = 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/** A fine-tuning job as stored: OpenAI's job object's fields (gateway ids throughout), and how the gateway follows it. */
export interface FineTuningJobItem {
  id: string;
  workspace_id: string;
  organisation_id: string;
  key_id?: string;
  provider: string;
  model: string;
  training_file: string;
  validation_file: string | null;
  suffix: string | null;
  method?: Record<string, unknown>;
  hyperparameters?: Record<string, unknown>;
  integrations: unknown[] | null;
  seed: number | null;
  metadata: Record<string, string> | null;
  status: FineTuningStatus;
  fine_tuned_model: string | null;
  created_at: number;
  finished_at: number | null;
  trained_tokens: number | null;
  result_files: string[];
  estimated_finish: number | null;
  error: { code: string; message: string; param: string | null } | null;
  /** At the provider: its job and the files the gateway uploaded for it. */
  provider_job_id?: string;
  provider_training_file?: string;
  provider_validation_file?: string;
  /** The create request's gateway options (credentials among them), sealed; removed when the job ends. */
  sealed_options?: Record<string, unknown>;
  follows?: number;
  provider_unanswered_since?: number;
  /** The gateway ids the provider's result files get, fixed before they are copied. */
  planned_result_files?: string[];
  /** A cancel was asked for; it is passed on to the provider. */
  cancel_requested?: boolean;
  /** The cancel reached the provider. */
  cancel_sent?: boolean;
  /** The create request's `x-gateway-metadata`, which the job's provider calls are logged with. */
  line_metadata?: Record<string, unknown>;
}

export interface FineTuningEvent {
  id: string;
  object: 'fine_tuning.job.event';
  created_at: number;
  level: 'info' | 'warn' | 'error';
  message: string;
  type: 'message' | 'metrics';
  data?: unknown;
}

export async function putFineTuningJob(item: FineTuningJobItem): Promise<boolean> {
  const written = await writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall(
          { ...fineTuningJobKey.item(item.workspace_id, item.id), gsi1pk: fineTuningJobKey.workspaceList(item.workspace_id), gsi1sk: item.id, ...item },
          { removeUndefinedValues: true },
        ),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
  if (written) await markUnfinished(fineTuningJobKey.unfinishedPartition, item.id, item.workspace_id);
  return written;
}

export async function getFineTuningJob(workspaceId: string, id: string): Promise<FineTuningJobItem | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(fineTuningJobKey.item(workspaceId, id)), ConsistentRead: true }),
  );
  return result.Item ? strip(unmarshall(result.Item)) : undefined;
}

export async function listFineTuningJobs(workspaceId: string, query: { limit: number; after?: string }): Promise<Page<FineTuningJobItem>> {
  const page = await queryNewestFirst({ table: tables.control, index: 'gsi1', partition: fineTuningJobKey.workspaceList(workspaceId), ...query });
  return { data: page.items.map(strip), has_more: page.has_more };
}

export async function updateFineTuningJob(
  workspaceId: string,
  id: string,
  update: StateUpdate<FineTuningJobItem, FineTuningStatus>,
): Promise<FineTuningJobItem | undefined> {
  const result = await updateStateItem(fineTuningJobKey.item(workspaceId, id), update);
  return result ? strip(result) : undefined;
}

export const clearUnfinishedJob = (id: string) => clearUnfinished(fineTuningJobKey.unfinishedPartition, id);
export const listUnfinishedJobs = () => listUnfinished(fineTuningJobKey.unfinishedPartition);

/** Stores an event once: an event's key is its time and id, so a provider event mirrored again is the same item. */
export async function putFineTuningEvent(workspaceId: string, jobId: string, event: FineTuningEvent): Promise<void> {
  const sortId = `${String(event.created_at).padStart(12, '0')}#${event.id}`;
  await dynamoClient().send(
    new PutItemCommand({
      TableName: tables.control,
      Item: marshall({ ...fineTuningJobKey.event(workspaceId, jobId, sortId), ...event }, { removeUndefinedValues: true }),
    }),
  );
}

/** A page of the job's events, newest first; `after` is the last event id of the previous page. */
export async function listFineTuningEvents(workspaceId: string, jobId: string, query: { limit: number; after?: string }): Promise<Page<FineTuningEvent>> {
  const all: FineTuningEvent[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await dynamoClient().send(
      new QueryCommand({
        TableName: tables.control,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: marshall({ ':pk': fineTuningJobKey.partition(workspaceId, jobId), ':prefix': fineTuningJobKey.eventPrefix }),
        ScanIndexForward: false,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) all.push(strip(unmarshall(item)) as unknown as FineTuningEvent);
    start = page.LastEvaluatedKey;
  } while (start);
  const from = query.after ? all.findIndex((event) => event.id === query.after) + 1 : 0;
  const data = all.slice(from, from + query.limit);
  return { data, has_more: from + query.limit < all.length };
}

/** A checkpoint as the spec shapes it; `fine_tuning_job_id` is the gateway's job id. */
export interface FineTuningCheckpoint {
  id: string;
  object: 'fine_tuning.job.checkpoint';
  created_at: number;
  fine_tuned_model_checkpoint: string;
  step_number: number;
  metrics: Record<string, number>;
  fine_tuning_job_id: string;
}

/** Stores a checkpoint once (keyed by its step and id: mirrored again, the same item). */
export async function putFineTuningCheckpoint(workspaceId: string, checkpoint: FineTuningCheckpoint): Promise<void> {
  const sortId = `${String(checkpoint.step_number).padStart(10, '0')}#${checkpoint.id}`;
  await dynamoClient().send(
    new PutItemCommand({
      TableName: tables.control,
      Item: marshall({ ...fineTuningJobKey.checkpoint(workspaceId, checkpoint.fine_tuning_job_id, sortId), ...checkpoint }),
    }),
  );
}

/** A page of the job's checkpoints, the latest step first; `after` is the last checkpoint id of the previous page. */
export async function listFineTuningCheckpoints(
  workspaceId: string,
  jobId: string,
  query: { limit: number; after?: string },
): Promise<Page<FineTuningCheckpoint>> {
  const result = await dynamoClient().send(
    new QueryCommand({
      TableName: tables.control,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: marshall({ ':pk': fineTuningJobKey.partition(workspaceId, jobId), ':prefix': fineTuningJobKey.checkpointPrefix }),
      ScanIndexForward: false,
    }),
  );
  const all = (result.Items ?? []).map((item) => strip(unmarshall(item)) as unknown as FineTuningCheckpoint);
  const from = query.after ? all.findIndex((checkpoint) => checkpoint.id === query.after) + 1 : 0;
  return { data: all.slice(from, from + query.limit), has_more: from + query.limit < all.length };
}

function strip(item: Record<string, unknown>): FineTuningJobItem {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as unknown as FineTuningJobItem;
}
