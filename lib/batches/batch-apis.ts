/**
 * The provider batch APIs the gateway can run a batch on, behind one shape: submit the checked
 * input, look at the provider's batch (its state in OpenAI's words), cancel it, and read its results
 * as the lines of OpenAI's output and error files.
 */
import { openAICompatibleProviders } from '../providers/openai-compatible/providers';
import type { BatchStatus } from '../store/batches';
import { anthropicBatchApi } from './anthropic-batches';
import { fileLines } from '../core/text-lines';
import { mistralBatchApi } from './mistral-batches';
import type { ProviderBatchApi } from './provider-batch-api';
import { providerFileContent } from '../provider-jobs/provider-calls';
import { cancelProviderBatch, createProviderBatch, retrieveProviderBatch, uploadBatchInput } from './openai-batch-calls';

/** Provider states of OpenAI's Batch API that end a batch, and the gateway's state for each. */
const openAIEndings: Record<string, BatchStatus> = { completed: 'completed', failed: 'failed', expired: 'expired', cancelled: 'cancelled' };

/** OpenAI's Batch API (files with purpose `batch`, `/batches`), which the rows marked `batchApi` serve. */
const openAIBatchApi: ProviderBatchApi = {
  async submit(batch, lineOptions, input) {
    const inputFileId = await uploadBatchInput(batch, lineOptions, input);
    const created = await createProviderBatch(batch, lineOptions, inputFileId);
    return { batchId: created.id, inputFileId };
  },
  async look(batch, lineOptions, batchId) {
    const answer = await retrieveProviderBatch(batch, lineOptions, batchId);
    return {
      ending: openAIEndings[answer.status],
      request_counts: answer.request_counts,
      errors: (answer.errors?.data ?? []).map((error) => ({
        code: error.code ?? 'provider_error',
        message: error.message ?? 'The provider failed the batch.',
        param: error.param ?? null,
        line: error.line ?? null,
      })),
      results: { output_file_id: answer.output_file_id, error_file_id: answer.error_file_id },
    };
  },
  async cancel(batch, lineOptions, batchId) {
    await cancelProviderBatch(batch, lineOptions, batchId);
  },
  async *results(batch, lineOptions, _batchId, state) {
    // The provider's lines are OpenAI's format already: copied as they are.
    for (const [fileId, ok] of [
      [state.results?.output_file_id, true],
      [state.results?.error_file_id, false],
    ] as const) {
      if (!fileId) continue;
      for await (const { text } of fileLines(await providerFileContent(batch, lineOptions, fileId))) if (text.trim() !== '') yield { ok, text };
    }
  },
};

/**
 * Azure OpenAI's global-batch deployments: OpenAI's Batch API at the resource, whose lines and batch
 * name the operation without OpenAI's `/v1` (`/chat/completions`), and whose `model` is the
 * global-batch deployment's name.
 * @see https://learn.microsoft.com/azure/ai-foundry/openai/how-to/batch
 */
const azureBatchApi: ProviderBatchApi = {
  ...openAIBatchApi,
  async submit(batch, lineOptions, input) {
    const azureEndpoint = batch.endpoint.replace(/^\/v1\//, '/');
    const lines: string[] = [];
    for await (const { text } of fileLines([input])) {
      if (text.trim() !== '') lines.push(JSON.stringify({ ...JSON.parse(text), url: azureEndpoint }));
    }
    const inputFileId = await uploadBatchInput(batch, lineOptions, Buffer.from(`${lines.join('\n')}\n`));
    const created = await createProviderBatch(batch, lineOptions, inputFileId, azureEndpoint);
    return { batchId: created.id, inputFileId };
  },
};

const openAIBatchProviders = new Set(openAICompatibleProviders.filter((row) => row.batchApi).map((row) => row.name));

/** The batch API of a provider for a batch of `endpoint`, or undefined when the gateway must run it. */
export function batchApiOf(provider: string, endpoint: string): ProviderBatchApi | undefined {
  if (openAIBatchProviders.has(provider)) return openAIBatchApi;
  // Global batch takes chat and embeddings.
  if (provider === 'azure-openai' && endpoint !== '/v1/completions') return azureBatchApi;
  // Message Batches take Messages requests: chat only.
  if (provider === 'anthropic' && endpoint === '/v1/chat/completions') return anthropicBatchApi;
  // Mistral's batch jobs: chat and embeddings, one model a job.
  if (provider === 'mistral-ai' && endpoint !== '/v1/completions') return mistralBatchApi;
  return undefined;
}
