/**
 * A provider's own APIs for long work (files, batches, fine-tuning jobs), called by the workers as a
 * pass-through request of the work's caller with the options it was created with: through
 * `runInference`, so the provider's base URL, authentication and the outbound guards are the live
 * routes' own.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { GatewayError } from '../core/errors';
import { readBody } from '../core/read-body';
import { inferenceRequest } from '../inference/inference-request';
import { findProvider } from '../providers/registry';
import { inferenceContext, runInference } from '../inference/run-inference';

import type { LineOptions } from '../provider-jobs/sealed-options';

/** Whose work it is: a batch or a fine-tuning job, each logged under its id. */
export interface ProviderWork {
  id: string;
  workspace_id: string;
  organisation_id: string;
  key_id?: string;
  line_metadata?: Record<string, unknown>;
}

/** A provider's answer about a batch, job or file is small JSON; file contents are streamed instead. */
const maxJsonAnswerBytes = 4 * 1024 * 1024;

export interface ProviderCall {
  method: 'GET' | 'POST';
  path: string;
  body?: Buffer;
  contentType?: string;
}

/**
 * The path and query of a resource-level call for the provider the work names by its headers (a
 * catalog entry's settings are the entry's, so work that needs them is not sent to such a provider).
 */
function resourceApiAddress(lineOptions: LineOptions, path: string): { path: string; query: string } {
  const { provider, cloud } = lineOptions.options.credentials;
  const definition = provider ? findProvider(provider) : undefined;
  return definition?.resourceApiPath ? definition.resourceApiPath(cloud ?? {}, path) : { path, query: '' };
}

/** A provider call, as the work's caller with its options; the answer's body, or the provider's error thrown. */
export async function call(
  work: ProviderWork,
  lineOptions: LineOptions,
  { method, path, body, contentType }: ProviderCall,
): Promise<Readable | Buffer | string> {
  const address = resourceApiAddress(lineOptions, path);
  const request = inferenceRequest({
    kind: 'passthrough',
    method,
    providerPath: address.path,
    rawQuery: address.query,
    bytes: body,
    caller: { organisationId: work.organisation_id, workspaceId: work.workspace_id, keyId: work.key_id },
    options: lineOptions.options,
    headers: contentType ? { 'content-type': contentType } : {},
    metadata: { ...work.line_metadata, [work.id.startsWith('gwb_') ? 'batch_id' : 'fine_tuning_job_id']: work.id },
  });
  const context = inferenceContext(request);
  const result = await runInference(context);
  await context.finish({ status: result.outcome.status, traceId: work.id });
  if (!result.outcome.ok) throw result.outcome.error;
  return result.outcome.body;
}

/** A provider call whose answer is JSON. */
export async function callJson<T>(work: ProviderWork, lineOptions: LineOptions, request: ProviderCall): Promise<T> {
  const body = await call(work, lineOptions, request);
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.isBuffer(body) ? body : await readBody(body, maxJsonAnswerBytes, "The provider's answer");
  try {
    return JSON.parse(bytes.toString('utf8')) as T;
  } catch {
    throw new GatewayError(502, `The provider answered ${request.method} /${request.path} with a body that is not JSON.`, {
      code: 'provider_invalid_response',
    });
  }
}

/** A POST of a JSON body whose answer is JSON (a create at a provider's batch or fine-tuning API). */
export function postJson<T>(work: ProviderWork, lineOptions: LineOptions, path: string, value: unknown): Promise<T> {
  return callJson<T>(work, lineOptions, { method: 'POST', path, body: Buffer.from(JSON.stringify(value)), contentType: 'application/json' });
}

/** Uploads a provider file (multipart, OpenAI's Files API shape); answers its id. */
export async function uploadProviderFile(
  work: ProviderWork,
  lineOptions: LineOptions,
  content: Buffer,
  file: { purpose: string; filename: string },
): Promise<string> {
  const boundary = `gateway${randomBytes(12).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\n${file.purpose}\r\n`),
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${file.filename}"\r\ncontent-type: application/jsonl\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const answer = await callJson<{ id?: unknown }>(work, lineOptions, {
    method: 'POST',
    path: 'files',
    body,
    contentType: `multipart/form-data; boundary=${boundary}`,
  });
  if (typeof answer.id !== 'string')
    throw new GatewayError(502, 'The provider answered the file upload without a file id.', { code: 'provider_invalid_response' });
  return answer.id;
}

/** A provider file's content, as it arrives. */
export async function providerFileContent(work: ProviderWork, lineOptions: LineOptions, fileId: string): Promise<AsyncIterable<Buffer | string>> {
  const body = await call(work, lineOptions, { method: 'GET', path: `files/${encodeURIComponent(fileId)}/content` });
  return typeof body === 'string' || Buffer.isBuffer(body) ? Readable.from([body]) : body;
}
