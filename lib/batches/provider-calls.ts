/**
 * A provider's own batch and files APIs, called by the batch workers as a pass-through request of
 * the batch's caller with the batch's options: through `runInference`, so the provider's base URL,
 * authentication and the outbound guards are the live routes' own.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { GatewayError } from '../core/errors';
import { readBody } from '../core/read-body';
import { inferenceRequest } from '../inference/inference-request';
import { inferenceContext, runInference } from '../inference/run-inference';
import type { BatchItem } from '../store/batches';
import type { LineOptions } from './line-options';

/** A provider's answer about a batch or file is small JSON; file contents are streamed instead. */
const maxJsonAnswerBytes = 4 * 1024 * 1024;

export interface ProviderCall {
  method: 'GET' | 'POST';
  path: string;
  body?: Buffer;
  contentType?: string;
}

/** A provider call, as the batch's caller with its options; the answer's body, or the provider's error thrown. */
export async function call(batch: BatchItem, lineOptions: LineOptions, { method, path, body, contentType }: ProviderCall): Promise<Readable | Buffer | string> {
  const request = inferenceRequest({
    kind: 'passthrough',
    method,
    providerPath: path,
    rawQuery: '',
    bytes: body,
    caller: { organisationId: batch.organisation_id, workspaceId: batch.workspace_id, keyId: batch.key_id },
    options: lineOptions.options,
    headers: contentType ? { 'content-type': contentType } : {},
    metadata: { ...batch.line_metadata, batch_id: batch.id },
  });
  const context = inferenceContext(request);
  const result = await runInference(context);
  await context.finish({ status: result.outcome.status, traceId: batch.id });
  if (!result.outcome.ok) throw result.outcome.error;
  return result.outcome.body;
}

/** A provider call whose answer is JSON. */
export async function callJson<T>(batch: BatchItem, lineOptions: LineOptions, request: ProviderCall): Promise<T> {
  const body = await call(batch, lineOptions, request);
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.isBuffer(body) ? body : await readBody(body, maxJsonAnswerBytes, "The provider's answer");
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch {
    throw new GatewayError(502, `The provider answered ${request.method} /${request.path} with a body that is not JSON.`, {
      code: 'provider_invalid_response',
    });
  }
}

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
export async function uploadBatchInput(batch: BatchItem, lineOptions: LineOptions, content: Buffer): Promise<string> {
  const boundary = `gateway${randomBytes(12).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`),
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${batch.id}.jsonl"\r\ncontent-type: application/jsonl\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const file = await callJson<{ id?: unknown }>(batch, lineOptions, {
    method: 'POST',
    path: 'files',
    body,
    contentType: `multipart/form-data; boundary=${boundary}`,
  });
  if (typeof file.id !== 'string')
    throw new GatewayError(502, 'The provider answered the file upload without a file id.', { code: 'provider_invalid_response' });
  return file.id;
}

export async function createProviderBatch(batch: BatchItem, lineOptions: LineOptions, inputFileId: string): Promise<ProviderBatch> {
  const body = Buffer.from(
    JSON.stringify({ input_file_id: inputFileId, endpoint: batch.endpoint, completion_window: '24h', metadata: { gateway_batch_id: batch.id } }),
  );
  return checked(await callJson<ProviderBatch>(batch, lineOptions, { method: 'POST', path: 'batches', body, contentType: 'application/json' }));
}

export async function retrieveProviderBatch(batch: BatchItem, lineOptions: LineOptions, id: string): Promise<ProviderBatch> {
  return checked(await callJson<ProviderBatch>(batch, lineOptions, { method: 'GET', path: `batches/${encodeURIComponent(id)}` }));
}

export async function cancelProviderBatch(batch: BatchItem, lineOptions: LineOptions, id: string): Promise<ProviderBatch> {
  return checked(
    await callJson<ProviderBatch>(batch, lineOptions, { method: 'POST', path: `batches/${encodeURIComponent(id)}/cancel`, body: Buffer.alloc(0) }),
  );
}

/** A provider file's content, as it arrives. */
export async function providerFileContent(batch: BatchItem, lineOptions: LineOptions, fileId: string): Promise<AsyncIterable<Buffer | string>> {
  const body = await call(batch, lineOptions, { method: 'GET', path: `files/${encodeURIComponent(fileId)}/content` });
  return typeof body === 'string' || Buffer.isBuffer(body) ? Readable.from([body]) : body;
}

function checked(answer: ProviderBatch): ProviderBatch {
  if (typeof answer?.id !== 'string' || typeof answer.status !== 'string') {
    throw new GatewayError(502, 'The provider answered with something that is not a batch object.', { code: 'provider_invalid_response' });
  }
  return answer;
}
