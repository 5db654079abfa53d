import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoClient } from './clients';
import { writeIfCondition } from './conditional';
import { batchKey } from './keys';
import { queryNewestFirst, type Page } from './newest-first';
import { updateStateItem, type StateUpdate } from './state-update';
import { tables } from './tables';
import { clearUnfinished as clearUnfinishedWork, listUnfinished, markUnfinished as markUnfinishedWork } from './unfinished-work';

export type BatchStatus = 'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

export interface BatchErrorEntry {
  code: string;
  message: string;
  param: string | null;
  line: number | null;
}

export interface RequestCounts {
  total: number;
  completed: number;
  failed: number;
}

/** A managed batch as stored. Timestamps are epoch seconds, set when their state is entered. */
export interface BatchItem {
  id: string;
  workspace_id: string;
  organisation_id: string;
  key_id?: string;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  created_at: number;
  expires_at: number;
  in_progress_at?: number;
  finalizing_at?: number;
  completed_at?: number;
  failed_at?: number;
  expired_at?: number;
  cancelling_at?: number;
  cancelled_at?: number;
  errors?: BatchErrorEntry[];
  output_file_id?: string;
  error_file_id?: string;
  /** Final once the batch ends; while it runs, the chunks' counts are the truth (batch-work.ts). */
  request_counts: RequestCounts;
  metadata: Record<string, string> | null;
  /** Set once the input is split: chunks are numbered 0 to chunk_count - 1. */
  chunk_count?: number;
  /** The ids the output and error files get, chosen before they are written, so a retried finalization writes the same files. */
  planned_output_file_id?: string;
  planned_error_file_id?: string;
  /** The create request's gateway options (credentials among them), sealed (an EncryptedBlob); removed when the batch ends. */
  sealed_options?: Record<string, unknown>;
  /**
   * Set when the batch runs at its provider's batch API rather than on the gateway's workers: the
   * provider, and once created there, the provider's batch and input file, and how often it was followed.
   */
  provider_batch?: { provider: string; batch_id?: string; input_file_id?: string; follows?: number };
  /** When the provider first failed to answer a look at its batch, since its last answer. */
  provider_unanswered_since?: number;
  /** Set with `finalizing`: the state the batch ends in once its files are written. */
  ending?: 'completed' | 'expired';
  /** The create request's `x-gateway-metadata`, which every line's log record carries. */
  line_metadata?: Record<string, unknown>;
}

export async function putBatchItem(item: BatchItem): Promise<boolean> {
  const written = await writeIfCondition(() =>
    dynamoClient().send(
      new PutItemCommand({
        TableName: tables.control,
        Item: marshall(
          { ...batchKey.item(item.workspace_id, item.id), gsi1pk: batchKey.workspaceList(item.workspace_id), gsi1sk: item.id, ...item },
          { removeUndefinedValues: true },
        ),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    ),
  );
  if (written) await markUnfinished(item.workspace_id, item.id);
  return written;
}

export async function getBatchItem(workspaceId: string, id: string): Promise<BatchItem | undefined> {
  const result = await dynamoClient().send(
    new GetItemCommand({ TableName: tables.control, Key: marshall(batchKey.item(workspaceId, id)), ConsistentRead: true }),
  );
  return result.Item ? strip(unmarshall(result.Item)) : undefined;
}

export async function listBatchItems(workspaceId: string, query: { limit: number; after?: string }): Promise<Page<BatchItem>> {
  const page = await queryNewestFirst({ table: tables.control, index: 'gsi1', partition: batchKey.workspaceList(workspaceId), ...query });
  return { data: page.items.map(strip), has_more: page.has_more };
}

export type BatchUpdate = StateUpdate<BatchItem, BatchStatus>;

/**
 * A conditional update of a batch: the batch after it, or undefined when the batch is gone or not
 * in a state of `from` (so of two workers making the same move, one makes it).
 */
export async function updateBatchItem(workspaceId: string, id: string, update: BatchUpdate): Promise<BatchItem | undefined> {
  const result = await updateStateItem(batchKey.item(workspaceId, id), update);
  return result ? strip(result) : undefined;
}

/** Unfinished batches: what a starting runtime goes through to re-enqueue work whose messages were lost. */
export const markUnfinished = (workspaceId: string, id: string) => markUnfinishedWork(batchKey.unfinishedPartition, id, workspaceId);
export const clearUnfinished = (id: string) => clearUnfinishedWork(batchKey.unfinishedPartition, id);
export const listUnfinishedBatches = () => listUnfinished(batchKey.unfinishedPartition);

function strip(item: Record<string, unknown>): BatchItem {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...fields } = item;
  return fields as unknown as BatchItem;
}
