/**
 * OpenAI's Batch API calls (files with purpose `batch`, `/batches`), as the batch's caller through
 * the pass-through core.
 */
import { GatewayError } from '../core/errors';
import { callJson, postJson, uploadProviderFile } from '../provider-jobs/provider-calls';
import type { LineOptions } from '../provider-jobs/sealed-options';
import type { BatchItem } from '../store/batches';

/** The provider's batch object, the fields the gateway mirrors. */
export interface ProviderBatch {
  id: string;
  status: string;
  output_file_id?: string | null;
  error_file_id?: string | null;
  request_counts?: { total?: number; completed?: number; failed?: number };
  errors?: { data?: { code?: string; message?: string; param?: string | null; line?: number | null }[] } | null;
}

/** Uploads the batch's input (OpenAI's JSONL) as a provider file with purpose `batch`; answers its id. */
export function uploadBatchInput(batch: BatchItem, lineOptions: LineOptions, content: Buffer): Promise<string> {
  return uploadProviderFile(batch, lineOptions, content, { purpose: 'batch', filename: `${batch.id}.jsonl` });
}

/** Creates the provider's batch; `endpoint` as the provider names it (OpenAI's `/v1/…` unless told otherwise). */
export async function createProviderBatch(
  batch: BatchItem,
  lineOptions: LineOptions,
  inputFileId: string,
  endpoint: string = batch.endpoint,
): Promise<ProviderBatch> {
  const body = { input_file_id: inputFileId, endpoint, completion_window: '24h', metadata: { gateway_batch_id: batch.id } };
  return checked(await postJson<ProviderBatch>(batch, lineOptions, 'batches', body));
}

export async function retrieveProviderBatch(batch: BatchItem, lineOptions: LineOptions, id: string): Promise<ProviderBatch> {
  return checked(await callJson<ProviderBatch>(batch, lineOptions, { method: 'GET', path: `batches/${encodeURIComponent(id)}` }));
}

export async function cancelProviderBatch(batch: BatchItem, lineOptions: LineOptions, id: string): Promise<ProviderBatch> {
  return checked(
    await callJson<ProviderBatch>(batch, lineOptions, { method: 'POST', path: `batches/${encodeURIComponent(id)}/cancel`, body: Buffer.alloc(0) }),
  );
}

function checked(answer: ProviderBatch): ProviderBatch {
  if (typeof answer?.id !== 'string' || typeof answer.status !== 'string') {
    throw new GatewayError(502, 'The provider answered with something that is not a batch object.', { code: 'provider_invalid_response' });
  }
  return answer;
}
