/**
 * Anthropic's Message Batches as a provider batch API: each checked line is translated to a
 * Messages request with the live adapter's own mapping, and each result translated back to an
 * OpenAI chat completion in OpenAI's output line. Anthropic's custom ids are at most 64 characters
 * of `[A-Za-z0-9_-]`, so lines go by their number (`line-<n>`); a line index in S3 maps each back
 * to the client's `custom_id` and the mapping its answer is read with.
 * @see https://docs.anthropic.com/en/api/creating-message-batches
 */
import { badRequest, GatewayError } from '../core/errors';
import { toMessagesRequest, readMessageResponse, type AnthropicMapping } from '../providers/anthropic';
import type { ChatRequest } from '../providers/openai-format/types';
import { putLineIndex, readLineIndex } from '../store/batch-work';
import type { BatchErrorEntry } from '../store/batches';
import { fileLines } from '../core/text-lines';
import { BatchInputRejected } from './batch-input';
import type { ProviderBatchApi, ResultLine } from './provider-batch-api';
import { answeredLine, errorLine, refusedLine } from './line-results';
import { call, callJson, postJson } from '../provider-jobs/provider-calls';

interface MessageBatch {
  id?: unknown;
  processing_status?: unknown;
  request_counts?: { processing?: number; succeeded?: number; errored?: number; canceled?: number; expired?: number };
}

/** What the line index keeps of each request: the client's custom_id and how its answer is read. */
export interface IndexEntry {
  custom_id: string;
  mapping: AnthropicMapping;
}

/** The HTTP status each Anthropic error type stands for, for a refused line's `response.status_code`. */
const errorStatuses: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const checkedBatch = (answer: MessageBatch) => {
  if (typeof answer?.id !== 'string' || typeof answer.processing_status !== 'string') {
    throw new GatewayError(502, 'Anthropic answered with something that is not a message batch.', { code: 'provider_invalid_response', provider: 'anthropic' });
  }
  return answer as MessageBatch & { id: string; processing_status: string };
};

export const anthropicBatchApi: ProviderBatchApi = {
  async submit(batch, lineOptions, input) {
    const requests: { custom_id: string; params: Record<string, unknown> }[] = [];
    const index: string[] = [];
    const errors: BatchErrorEntry[] = [];
    for await (const { text, line } of fileLines([input])) {
      if (text.trim() === '') continue;
      const { custom_id, body } = JSON.parse(text) as { custom_id: string; body: ChatRequest };
      try {
        const { body: params, mapping } = toMessagesRequest(body, { provider: 'anthropic', strictApiCompliance: true, stream: false });
        requests.push({ custom_id: `line-${index.length + 1}`, params: { model: body.model, ...params } });
        index.push(JSON.stringify({ custom_id, mapping } satisfies IndexEntry));
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        errors.push({
          code: error.code ?? 'invalid_request',
          message: `Line ${line}: ${error.message}`,
          param: error.param ? `body.${error.param}` : 'body',
          line,
        });
      }
    }
    if (errors.length > 0) throw new BatchInputRejected(errors);
    await putLineIndex(batch.workspace_id, batch.id, Buffer.from(`${index.join('\n')}\n`));
    const created = checkedBatch(await postJson<MessageBatch>(batch, lineOptions, 'messages/batches', { requests }));
    return { batchId: created.id };
  },

  async look(batch, lineOptions, batchId) {
    const answer = checkedBatch(await callJson<MessageBatch>(batch, lineOptions, { method: 'GET', path: `messages/batches/${encodeURIComponent(batchId)}` }));
    const counts = answer.request_counts ?? {};
    const failed = (counts.errored ?? 0) + (counts.expired ?? 0);
    return {
      // Anthropic's batch only ends; whether it ended cancelled is the gateway's to know.
      ending: answer.processing_status === 'ended' ? (batch.status === 'cancelling' ? 'cancelled' : 'completed') : undefined,
      request_counts: { total: (counts.processing ?? 0) + (counts.succeeded ?? 0) + failed + (counts.canceled ?? 0), completed: counts.succeeded ?? 0, failed },
    };
  },

  async cancel(batch, lineOptions, batchId) {
    await callJson(batch, lineOptions, { method: 'POST', path: `messages/batches/${encodeURIComponent(batchId)}/cancel`, body: Buffer.alloc(0) });
  },

  async *results(batch, lineOptions, batchId): AsyncIterable<ResultLine> {
    const index: IndexEntry[] = [];
    for await (const { text } of fileLines([await readLineIndex(batch.workspace_id, batch.id)])) if (text) index.push(JSON.parse(text) as IndexEntry);
    const body = await call(batch, lineOptions, { method: 'GET', path: `messages/batches/${encodeURIComponent(batchId)}/results` });
    for await (const { text } of fileLines(typeof body === 'string' || Buffer.isBuffer(body) ? [body] : body)) {
      if (text.trim() === '') continue;
      const { custom_id: providerId, result } = JSON.parse(text) as { custom_id: string; result: Record<string, any> };
      const entry = index[Number(/^line-(\d+)$/.exec(providerId)?.[1]) - 1];
      if (!entry) throw badRequest(`Anthropic answered a result for ${providerId}, which this batch did not send.`);
      // A request a cancel stopped is in neither file, as a managed batch's (and OpenAI's).
      if (result.type === 'canceled') continue;
      yield anthropicResultLine(entry, result);
    }
  },
};

/** One Message Batches result as the line of OpenAI's output or error file it stands for. */
export function anthropicResultLine({ custom_id, mapping }: IndexEntry, result: Record<string, any>): ResultLine {
  if (result.type === 'succeeded') {
    const { body } = readMessageResponse(Buffer.from(JSON.stringify(result.message)), mapping);
    return { ok: true, text: answeredLine(custom_id, 200, String(result.message?.id ?? ''), JSON.parse(body)) };
  }
  if (result.type === 'errored') {
    const error = result.error?.error ?? result.error ?? {};
    const type = typeof error.type === 'string' ? error.type : 'api_error';
    const message = typeof error.message === 'string' ? error.message : 'Anthropic failed the request.';
    return { ok: false, text: refusedLine(custom_id, errorStatuses[type] ?? 500, '', result.error, { code: type, message }) };
  }
  return { ok: false, text: errorLine(custom_id, 'batch_expired', 'The batch expired before this request was run.') };
}
