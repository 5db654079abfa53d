/**
 * OpenAI's fine-tuning API (files with purpose `fine-tune`, `/fine_tuning/jobs`), which Azure OpenAI
 * serves too (under `/openai`, with its api-version: provider-calls.ts adds it).
 * @see https://platform.openai.com/docs/api-reference/fine-tuning
 */
import { GatewayError } from '../core/errors';
import { callJson, providerFileContent, uploadProviderFile, postJson } from '../provider-jobs/provider-calls';
import type { FineTuningStatus } from '../store/fine-tuning-jobs';
import type { ProviderFineTuningApi, ProviderJobState } from './provider-api';

/** OpenAI's fine-tuning job, the fields the gateway mirrors. */
interface OpenAIJob {
  id?: unknown;
  status?: unknown;
  fine_tuned_model?: string | null;
  finished_at?: number | null;
  trained_tokens?: number | null;
  estimated_finish?: number | null;
  result_files?: string[];
  hyperparameters?: Record<string, unknown>;
  error?: { code?: string; message?: string; param?: string | null } | null;
}

const statuses: readonly string[] = ['validating_files', 'queued', 'running', 'succeeded', 'failed', 'cancelled'] satisfies FineTuningStatus[];
/** Azure's older words for the same states. */
const azureStatuses: Record<string, FineTuningStatus> = { pending: 'queued', notRunning: 'queued', created: 'validating_files' };

function stateOf(answer: OpenAIJob): ProviderJobState {
  const status =
    typeof answer.status === 'string' ? (statuses.includes(answer.status) ? (answer.status as FineTuningStatus) : azureStatuses[answer.status]) : undefined;
  return {
    status,
    fine_tuned_model: answer.fine_tuned_model ?? null,
    trained_tokens: answer.trained_tokens ?? null,
    estimated_finish: answer.estimated_finish ?? null,
    finished_at: answer.finished_at ?? null,
    ...(answer.hyperparameters ? { hyperparameters: answer.hyperparameters } : {}),
    result_files: answer.result_files ?? [],
    error: answer.error?.message ? { code: answer.error.code ?? 'provider_error', message: answer.error.message, param: answer.error.param ?? null } : null,
  };
}

const jobPath = (id: string, rest = '') => `fine_tuning/jobs/${encodeURIComponent(id)}${rest}`;

export const openAIFineTuningApi: ProviderFineTuningApi = {
  uploadFile(job, lineOptions, content, role) {
    const fileId = role === 'training' ? job.training_file : job.validation_file;
    return uploadProviderFile(job, lineOptions, content, { purpose: 'fine-tune', filename: `${fileId}.jsonl` });
  },
  async create(job, lineOptions) {
    const body = {
      model: job.model,
      training_file: job.provider_training_file,
      validation_file: job.provider_validation_file ?? undefined,
      suffix: job.suffix ?? undefined,
      method: job.method,
      hyperparameters: job.hyperparameters,
      integrations: job.integrations ?? undefined,
      seed: job.seed ?? undefined,
      metadata: { ...job.metadata, gateway_job_id: job.id },
    };
    const created = await postJson<OpenAIJob>(job, lineOptions, 'fine_tuning/jobs', body);
    if (typeof created.id !== 'string')
      throw new GatewayError(502, 'The provider answered without a fine-tuning job id.', { code: 'provider_invalid_response' });
    return { id: created.id, state: stateOf(created) };
  },
  async look(job, lineOptions, providerJobId) {
    return stateOf(await callJson<OpenAIJob>(job, lineOptions, { method: 'GET', path: jobPath(providerJobId) }));
  },
  async cancel(job, lineOptions, providerJobId) {
    await callJson(job, lineOptions, { method: 'POST', path: jobPath(providerJobId, '/cancel'), body: Buffer.alloc(0) });
  },
  async events(job, lineOptions, providerJobId) {
    const page = await callJson<{ data?: { id?: string; created_at?: number; level?: string; message?: string; type?: string; data?: unknown }[] }>(
      job,
      lineOptions,
      { method: 'GET', path: jobPath(providerJobId, '/events') },
    );
    return (page.data ?? []).flatMap((event) =>
      typeof event.id === 'string'
        ? [
            {
              id: event.id,
              object: 'fine_tuning.job.event' as const,
              created_at: event.created_at ?? Math.floor(Date.now() / 1000),
              level: event.level === 'warn' || event.level === 'error' ? event.level : ('info' as const),
              message: event.message ?? '',
              type: event.type === 'metrics' ? ('metrics' as const) : ('message' as const),
              data: event.data,
            },
          ]
        : [],
    );
  },
  async checkpoints(job, lineOptions, providerJobId) {
    const page = await callJson<{
      data?: { id?: string; created_at?: number; fine_tuned_model_checkpoint?: string; step_number?: number; metrics?: Record<string, number> }[];
    }>(job, lineOptions, { method: 'GET', path: jobPath(providerJobId, '/checkpoints') });
    return (page.data ?? []).flatMap((checkpoint) =>
      typeof checkpoint.id === 'string' && typeof checkpoint.step_number === 'number'
        ? [
            {
              id: checkpoint.id,
              object: 'fine_tuning.job.checkpoint' as const,
              created_at: checkpoint.created_at ?? Math.floor(Date.now() / 1000),
              fine_tuned_model_checkpoint: checkpoint.fine_tuned_model_checkpoint ?? '',
              step_number: checkpoint.step_number,
              metrics: checkpoint.metrics ?? {},
              fine_tuning_job_id: job.id,
            },
          ]
        : [],
    );
  },
  resultFile(job, lineOptions, providerFileId) {
    return providerFileContent(job, lineOptions, providerFileId);
  },
};
