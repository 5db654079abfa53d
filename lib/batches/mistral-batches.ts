/**
 * Mistral's batch jobs as a provider batch API. Mistral takes a file of `{custom_id, body}` lines
 * (the bodies mapped as the live adapter maps a chat request to Mistral) and runs one model per job,
 * so a batch whose lines name different models fails, naming the first line that differs. Results
 * come back as OpenAI's line format, with Mistral's finish reasons mapped as on the live route.
 * @see https://docs.mistral.ai/api/#tag/batch
 */
import { GatewayError } from '../core/errors';
import { newId } from '../core/ids';
import { openAICompatibleProviders } from '../providers/openai-compatible/providers';
import { mapFinishReasons } from '../providers/openai-compatible/stream';
import type { JsonObject } from '../providers/types';
import type { BatchStatus } from '../store/batches';
import { fileLines } from '../core/text-lines';
import { BatchInputRejected } from './batch-input';
import type { ProviderBatchApi } from './provider-batch-api';
import { callJson, providerFileContent, postJson } from '../provider-jobs/provider-calls';
import { uploadBatchInput } from './openai-batch-calls';

const mistral = openAICompatibleProviders.find((row) => row.name === 'mistral-ai')!;

interface BatchJob {
  id?: unknown;
  status?: unknown;
  output_file?: string | null;
  error_file?: string | null;
  total_requests?: number;
  succeeded_requests?: number;
  failed_requests?: number;
  errors?: { message?: string; count?: number }[];
}

/** Mistral's job states that end a batch, and the gateway's state for each. */
const endings: Record<string, BatchStatus> = { SUCCESS: 'completed', FAILED: 'failed', TIMEOUT_EXCEEDED: 'expired', CANCELLED: 'cancelled' };

const checkedJob = (answer: BatchJob) => {
  if (typeof answer?.id !== 'string' || typeof answer.status !== 'string') {
    throw new GatewayError(502, 'Mistral answered with something that is not a batch job.', { code: 'provider_invalid_response', provider: 'mistral-ai' });
  }
  return answer as BatchJob & { id: string; status: string };
};

export const mistralBatchApi: ProviderBatchApi = {
  async submit(batch, lineOptions, input) {
    const lines: string[] = [];
    let model: { name: string; line: number } | undefined;
    for await (const { text, line } of fileLines([input])) {
      if (text.trim() === '') continue;
      const { custom_id, body } = JSON.parse(text) as { custom_id: string; body: JsonObject & { model: string } };
      model ??= { name: body.model, line };
      if (body.model !== model.name) {
        throw new BatchInputRejected([
          {
            code: 'mixed_models',
            message: `Line ${line}: model is ${JSON.stringify(body.model)}, but line ${model.line} asks for ${JSON.stringify(model.name)}; a Mistral batch job runs one model. Send a batch per model, or completion_window "immediate" to have the gateway run it.`,
            param: 'body.model',
            line,
          },
        ]);
      }
      lines.push(JSON.stringify({ custom_id, body: mistral.mapRequest ? mistral.mapRequest(body) : body }));
    }
    const inputFileId = await uploadBatchInput(batch, lineOptions, Buffer.from(`${lines.join('\n')}\n`));
    const job = checkedJob(
      await postJson<BatchJob>(batch, lineOptions, 'batch/jobs', {
        input_files: [inputFileId],
        endpoint: batch.endpoint,
        model: model?.name,
        metadata: { gateway_batch_id: batch.id },
      }),
    );
    return { batchId: job.id, inputFileId };
  },

  async look(batch, lineOptions, batchId) {
    const job = checkedJob(await callJson<BatchJob>(batch, lineOptions, { method: 'GET', path: `batch/jobs/${encodeURIComponent(batchId)}` }));
    return {
      ending: endings[job.status],
      request_counts: { total: job.total_requests, completed: job.succeeded_requests ?? 0, failed: job.failed_requests ?? 0 },
      errors: (job.errors ?? []).map((error) => ({ code: 'provider_error', message: error.message ?? 'Mistral failed the batch.', param: null, line: null })),
      results: { output_file_id: job.output_file, error_file_id: job.error_file },
    };
  },

  async cancel(batch, lineOptions, batchId) {
    await callJson(batch, lineOptions, { method: 'POST', path: `batch/jobs/${encodeURIComponent(batchId)}/cancel`, body: Buffer.alloc(0) });
  },

  async *results(batch, lineOptions, _batchId, state) {
    for (const fileId of [state.results?.output_file_id, state.results?.error_file_id]) {
      if (!fileId) continue;
      for await (const { text } of fileLines(await providerFileContent(batch, lineOptions, fileId))) {
        if (text.trim() === '') continue;
        const line = JSON.parse(text) as {
          id?: string;
          custom_id: string;
          response?: { status_code?: number; request_id?: string; body?: any } | null;
          error?: unknown;
        };
        const status = line.response?.status_code ?? 0;
        const body = line.response?.body;
        if (body && mistral.finishReasons) mapFinishReasons(body, mistral.finishReasons);
        const ok = status >= 200 && status < 300 && !line.error;
        const response = line.response ? { status_code: status, request_id: line.response.request_id ?? '', body } : null;
        yield { ok, text: JSON.stringify({ id: line.id ?? newId('batch_req'), custom_id: line.custom_id, response, error: line.error ?? null }) };
      }
    }
  },
};
