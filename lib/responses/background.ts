/**
 * Background responses (`background: true`): the create stores the response `queued` with the
 * request's options sealed and sends its id to the responses queue; the worker claims it under a
 * lease, runs it through the same core as a live request, and writes its end only if it still holds
 * the lease and nobody cancelled it. A message delivered again finds the response ended (or claimed
 * by a live worker) and does nothing; one delivered after a worker died finds the lease run out and
 * runs it again.
 */
import type { Readable } from 'node:stream';
import { GatewayError, toGatewayError } from '../core/errors';
import { readBody } from '../core/read-body';
import { inferenceRequest } from '../inference/inference-request';
import { inferenceContext, runInference } from '../inference/run-inference';
import { openLineOptions, sealLineOptions, type LineOptions } from '../provider-jobs/sealed-options';
import type { EncryptedBlob } from '../secrets/envelope';
import { claimStoredResponse, finishStoredResponse, putStoredResponse, type StoredResponse } from '../store/responses';
import { sendBackgroundResponse } from '../store/responses-queue';
import type { NativeResponseLink } from '../providers/responses-format/chain';
import type { ConversationItem, ResponseObject, ResponsesRequest } from '../providers/responses-format/types';
import { nativeLinkOf, runResponse, stampedAnswer } from './run-response';

type Stored = StoredResponse<ResponseObject, ConversationItem>;

/** A run's lease: the worker's timeout (15 minutes), so a live worker is never taken over. */
const leaseSeconds = 900;
const maxAnswerBytes = 64 * 1024 * 1024;

/** Stores a background response `queued` and hands it to the worker; the answer is the stored object. */
export async function queueBackgroundResponse(
  stored: Omit<Stored, 'run'> & { run: NonNullable<Stored['run']> },
  lineOptions: LineOptions,
): Promise<ResponseObject> {
  const { workspaceId } = stored.run.caller;
  const sealed = JSON.stringify(await sealLineOptions(workspaceId, lineOptions));
  await putStoredResponse(workspaceId, stored, sealed);
  await sendBackgroundResponse({ workspace_id: workspaceId, response_id: stored.response.id });
  return stored.response;
}

/** Runs a queued background response, once; the worker's whole job for one message. */
export async function runBackgroundResponse(workspaceId: string, id: string): Promise<void> {
  const claimed = await claimStoredResponse<Stored>(workspaceId, id, leaseSeconds);
  if (!claimed?.stored.run) return;
  const { stored, leaseUntil } = claimed;
  const running: ResponseObject = { ...stored.response, status: 'in_progress' };
  let response: ResponseObject;
  let link: NativeResponseLink | undefined;
  try {
    const lineOptions = await openLineOptions(workspaceId, JSON.parse(claimed.sealed) as EncryptedBlob);
    ({ response, link } = await answer(stored, lineOptions, running));
  } catch (error) {
    // A request error (a config that no longer resolves, say) ends the response; anything else is
    // the queue's to try again.
    if (!(error instanceof GatewayError) || error.status >= 500 || error.status === 429) throw error;
    response = failed(running, error);
  }
  await finishStoredResponse(workspaceId, { ...stored, response, link, run: undefined }, leaseUntil);
}

async function answer(stored: Stored, lineOptions: LineOptions, running: ResponseObject): Promise<{ response: ResponseObject; link?: NativeResponseLink }> {
  const run = stored.run!;
  const request = run.request as ResponsesRequest;
  const result = await runResponse(request, { history: stored.history, link: stored.link }, async (body, responsesChain) => {
    const inference = inferenceContext({
      ...inferenceRequest({
        kind: 'unified',
        operation: 'responses',
        body,
        caller: run.caller,
        options: lineOptions.options,
        headers: lineOptions.headers,
        metadata: run.metadata,
        path: '/v1/responses',
      }),
      responsesChain,
    });
    const result = await runInference(inference);
    await inference.finish({ status: result.outcome.ok ? result.outcome.status : result.outcome.error.status, traceId: running.id });
    return result;
  });
  if (!result.outcome.ok) {
    // The provider's failure after routing gave up is the response's end, as a live request's answer would be.
    return { response: failed(running, result.outcome.error) };
  }
  const body = result.outcome.body;
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.isBuffer(body) ? body : await readBody(body as Readable, maxAnswerBytes, 'the response');
  const { response, providerId } = stampedAnswer(JSON.parse(bytes.toString('utf8')) as ResponseObject, running);
  return { response, link: nativeLinkOf(result, request, providerId) };
}

function failed(running: ResponseObject, error: unknown): ResponseObject {
  const gatewayError = toGatewayError(error);
  return { ...running, status: 'failed', error: { code: gatewayError.code ?? 'server_error', message: gatewayError.message } };
}
