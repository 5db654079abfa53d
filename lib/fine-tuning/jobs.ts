/**
 * Fine-tuning jobs the gateway drives at a provider's fine-tuning API: created from gateway files
 * (uploaded to the provider by the worker), followed by the fine-tuning queue's worker, listed, read
 * and cancelled per workspace. This module records what a client asks and tells the queue.
 */
import { badRequest, GatewayError, notFound } from '../core/errors';
import { newId } from '../core/ids';
import { findFile } from '../files/stored-files';
import type { InferenceCaller } from '../inference/inference-request';
import { fineTuningApiOf, fineTuningProviders } from './fine-tuning-apis';
import { findProvider } from '../providers/registry';
import { sealLineOptions, type LineOptions } from '../provider-jobs/sealed-options';
import { sendFineTuning } from '../store/fine-tuning-queue';
import {
  getFineTuningJob,
  listFineTuningJobs,
  putFineTuningEvent,
  putFineTuningJob,
  updateFineTuningJob,
  type FineTuningJobItem,
} from '../store/fine-tuning-jobs';
import type { Page } from '../store/newest-first';

/** Ids of the gateway's jobs: a prefix of their own (OpenAI's start `ftjob-`). */
export const gatewayJobIdPrefix = 'gwft';

export function isGatewayJobId(id: string): boolean {
  return id.startsWith(`${gatewayJobIdPrefix}_`);
}

export const finalJobStatuses = ['succeeded', 'failed', 'cancelled'] as const;

export interface CreateJobInput {
  model: string;
  training_file: string;
  validation_file?: string | null;
  suffix?: string | null;
  method?: Record<string, unknown>;
  hyperparameters?: Record<string, unknown>;
  integrations?: unknown[] | null;
  seed?: number | null;
  metadata?: Record<string, string> | null;
}

/** The provider the job runs at: the one `x-gateway-provider` names, when its fine-tuning API is one the gateway drives. */
export function fineTuningProvider(lineOptions: LineOptions): string {
  const { provider, customHost } = lineOptions.options.credentials;
  if (lineOptions.options.config.kind !== 'headers' || customHost || !provider || !fineTuningApiOf(provider)) {
    throw badRequest(
      `A fine-tuning job runs at a provider with a fine-tuning API the gateway drives: name it with x-gateway-provider (${fineTuningProviders.join(', ')}) and its key as Authorization, without a config or custom host.`,
      'x-gateway-provider',
      'provider_not_supported',
    );
  }
  // A setting the provider's host needs (Azure's resource name) is asked for now, not when the worker calls.
  findProvider(provider)?.baseUrlFor?.(lineOptions.options.credentials.cloud ?? {});
  return provider;
}

async function checkedFile(workspaceId: string, id: string, param: string): Promise<string> {
  const file = await findFile(workspaceId, id);
  if (file.purpose !== 'fine-tune') {
    throw badRequest(`File ${file.id} was uploaded with purpose "${file.purpose}"; a fine-tuning job's files need purpose "fine-tune".`, param, 'invalid_file');
  }
  return file.id;
}

const now = () => Math.floor(Date.now() / 1000);

export async function createJob(
  caller: InferenceCaller,
  input: CreateJobInput,
  lineOptions: LineOptions,
  lineMetadata: Record<string, unknown>,
): Promise<FineTuningJobItem> {
  const provider = fineTuningProvider(lineOptions);
  const trainingFile = await checkedFile(caller.workspaceId, input.training_file, 'training_file');
  const validationFile = input.validation_file ? await checkedFile(caller.workspaceId, input.validation_file, 'validation_file') : null;
  const item: FineTuningJobItem = {
    id: newId(gatewayJobIdPrefix),
    workspace_id: caller.workspaceId,
    organisation_id: caller.organisationId,
    key_id: caller.keyId,
    provider,
    model: input.model,
    training_file: trainingFile,
    validation_file: validationFile,
    suffix: input.suffix ?? null,
    method: input.method,
    hyperparameters: input.hyperparameters,
    integrations: input.integrations ?? null,
    seed: input.seed ?? null,
    metadata: input.metadata ?? null,
    status: 'validating_files',
    fine_tuned_model: null,
    created_at: now(),
    finished_at: null,
    trained_tokens: null,
    result_files: [],
    estimated_finish: null,
    error: null,
    sealed_options: { ...(await sealLineOptions(caller.workspaceId, lineOptions)) },
    line_metadata: Object.keys(lineMetadata).length ? lineMetadata : undefined,
  };
  fineTuningApiOf(provider)?.check?.(item);
  if (!(await putFineTuningJob(item))) throw new Error(`Job id ${item.id} was taken; ids are random, so this should not happen.`);
  await recordEvent(item, `Created fine-tuning job ${item.id} for ${provider}.`);
  await sendFineTuning({ kind: 'start', workspace_id: item.workspace_id, job_id: item.id });
  return item;
}

/** The gateway's own event of a job, beside the provider's. */
export async function recordEvent(
  item: Pick<FineTuningJobItem, 'workspace_id' | 'id'>,
  message: string,
  level: 'info' | 'warn' | 'error' = 'info',
): Promise<void> {
  await putFineTuningEvent(item.workspace_id, item.id, {
    id: newId('ftevent'),
    object: 'fine_tuning.job.event',
    created_at: now(),
    level,
    message,
    type: 'message',
  });
}

const storedIdPattern = new RegExp(`^${gatewayJobIdPrefix}_[0-9a-z]{26}$`);

export function jobNotFound(id: string) {
  const hint = isGatewayJobId(id)
    ? ''
    : ` The gateway's job ids start with ${gatewayJobIdPrefix}_; for a provider's job, select the provider (x-gateway-provider).`;
  return notFound(`No fine-tuning job ${JSON.stringify(id.slice(0, 100))} in this workspace.${hint}`, 'fine_tuning_job_not_found');
}

export async function findJob(workspaceId: string, id: string): Promise<FineTuningJobItem> {
  const item = storedIdPattern.test(id) ? await getFineTuningJob(workspaceId, id) : undefined;
  if (!item) throw jobNotFound(id);
  return item;
}

export function listJobs(workspaceId: string, query: { limit: number; after?: string }): Promise<Page<FineTuningJobItem>> {
  return listFineTuningJobs(workspaceId, query);
}

/** Asks the provider to cancel; the job is `cancelled` once the provider says so (the worker follows it). */
export async function cancelJob(workspaceId: string, id: string): Promise<FineTuningJobItem> {
  const found = await findJob(workspaceId, id);
  const asked = await updateFineTuningJob(workspaceId, id, { set: { cancel_requested: true }, from: ['validating_files', 'queued', 'running'] });
  if (!asked)
    throw new GatewayError(409, `Fine-tuning job ${found.id} is ${found.status}; only a job that has not ended can be cancelled.`, {
      code: 'job_not_cancellable',
    });
  if (!found.cancel_requested) {
    await recordEvent(asked, 'Cancel requested.');
    await sendFineTuning({ kind: 'cancel', workspace_id: workspaceId, job_id: id });
  }
  return asked;
}
