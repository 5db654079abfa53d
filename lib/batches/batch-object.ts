import type { BatchItem, RequestCounts } from '../store/batches';

/** OpenAI's batch object (the spec's fields); a timestamp of a state never entered is null. */
export interface BatchObject {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: { code: string; message: string; param: string | null; line: number | null }[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchItem['status'];
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: RequestCounts;
  metadata: Record<string, string> | null;
}

export function presentBatch(item: BatchItem, counts: RequestCounts = item.request_counts): BatchObject {
  return {
    id: item.id,
    object: 'batch',
    endpoint: item.endpoint,
    errors: item.errors?.length ? { object: 'list', data: item.errors } : null,
    input_file_id: item.input_file_id,
    completion_window: item.completion_window,
    status: item.status,
    output_file_id: item.output_file_id ?? null,
    error_file_id: item.error_file_id ?? null,
    created_at: item.created_at,
    in_progress_at: item.in_progress_at ?? null,
    expires_at: item.expires_at,
    finalizing_at: item.finalizing_at ?? null,
    completed_at: item.completed_at ?? null,
    failed_at: item.failed_at ?? null,
    expired_at: item.expired_at ?? null,
    cancelling_at: item.cancelling_at ?? null,
    cancelled_at: item.cancelled_at ?? null,
    request_counts: counts,
    metadata: item.metadata,
  };
}
