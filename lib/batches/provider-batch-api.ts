/**
 * What a provider batch API does for the gateway (batch-apis.ts has the ones it knows): submit the
 * checked input, look at the provider's batch (its state in OpenAI's words), cancel it, and read its
 * results as the lines of OpenAI's output and error files.
 */
import type { BatchErrorEntry, BatchItem, BatchStatus, RequestCounts } from '../store/batches';
import type { LineOptions } from '../provider-jobs/sealed-options';

/** The provider's batch as the gateway mirrors it. */
export interface ProviderBatchState {
  /** The gateway's state once the provider's batch has ended; undefined while it runs. */
  ending?: BatchStatus;
  request_counts?: Partial<RequestCounts>;
  errors?: BatchErrorEntry[];
  /** Whatever `results` needs to find the provider's results. */
  results?: { output_file_id?: string | null; error_file_id?: string | null };
}

export interface ResultLine {
  ok: boolean;
  /** The JSONL line, OpenAI's format. */
  text: string;
}

export interface ProviderBatchApi {
  /** Sends the checked input (OpenAI's JSONL) and creates the provider's batch; its ids. */
  submit(batch: BatchItem, lineOptions: LineOptions, input: Buffer): Promise<{ batchId: string; inputFileId?: string }>;
  look(batch: BatchItem, lineOptions: LineOptions, batchId: string): Promise<ProviderBatchState>;
  cancel(batch: BatchItem, lineOptions: LineOptions, batchId: string): Promise<void>;
  /** The results of an ended batch, answered and refused lines alike. */
  results(batch: BatchItem, lineOptions: LineOptions, batchId: string, state: ProviderBatchState): AsyncIterable<ResultLine>;
}
