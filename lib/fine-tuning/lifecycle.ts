/**
 * The fine-tuning queue's worker: `start` uploads the job's gateway files to the provider and
 * creates the provider's job; `follow` looks at it (delayed, with backoff), mirroring its status,
 * fields, events and checkpoints, and once it ends copies its result files home as gateway files;
 * `cancel` passes a cancel on. Each step is recorded before the next, and every write is keyed or
 * conditional, so a message delivered twice or a worker that dies converges on the same job.
 */
import { GatewayError } from '../core/errors';
import { newId } from '../core/ids';
import { FileWriter } from '../files/file-writer';
import { gatewayFileIdPrefix } from '../files/provider-selection';
import { fileLines } from '../core/text-lines';
import { followDelay, firstFollowSeconds, providerSilenceLimitSeconds } from '../provider-jobs/follow';
import { callJson, providerFileContent, uploadProviderFile } from '../provider-jobs/provider-calls';
import { openLineOptions, type LineOptions } from '../provider-jobs/sealed-options';
import type { EncryptedBlob } from '../secrets/envelope';
import { streamFileObject } from '../store/file-objects';
import { sendFineTuning } from '../store/fine-tuning-queue';
import {
  clearUnfinishedJob,
  getFineTuningJob,
  listUnfinishedJobs,
  putFineTuningCheckpoint,
  putFineTuningEvent,
  updateFineTuningJob,
  type FineTuningJobItem,
  type FineTuningStatus,
} from '../store/fine-tuning-jobs';
import { finalJobStatuses, recordEvent } from './jobs';

/** OpenAI's fine-tuning job, the fields the gateway mirrors. */
interface ProviderJob {
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

const statuses: readonly FineTuningStatus[] = ['validating_files', 'queued', 'running', 'succeeded', 'failed', 'cancelled'];
const unfinished: readonly FineTuningStatus[] = ['validating_files', 'queued', 'running'];
const now = () => Math.floor(Date.now() / 1000);
const isFinal = (status: string) => (finalJobStatuses as readonly string[]).includes(status);

async function optionsOf(job: FineTuningJobItem): Promise<LineOptions> {
  return openLineOptions(job.workspace_id, job.sealed_options as unknown as EncryptedBlob);
}

async function fileBytes(workspaceId: string, fileId: string): Promise<Buffer> {
  const content = await streamFileObject(workspaceId, fileId);
  if (!content) throw new GatewayError(400, `The file ${fileId} was deleted before the job started.`, { code: 'file_not_found' });
  const pieces: Buffer[] = [];
  for await (const piece of content) pieces.push(piece as Buffer);
  return Buffer.concat(pieces);
}

/** Ends a job with an error of the gateway's (the provider refused it, or stopped answering). */
async function failJob(job: FineTuningJobItem, error: { code: string; message: string; param: string | null }): Promise<void> {
  const failed = await updateFineTuningJob(job.workspace_id, job.id, {
    set: { status: 'failed', finished_at: now(), error },
    remove: ['sealed_options'],
    from: unfinished,
  });
  if (!failed) return;
  await recordEvent(job, `Failed: ${error.message}`, 'error');
  await clearUnfinishedJob(job.id);
}

export async function startJob(workspaceId: string, jobId: string): Promise<void> {
  let job = await getFineTuningJob(workspaceId, jobId);
  if (!job || isFinal(job.status) || !job.sealed_options) return;
  if (job.provider_job_id) {
    // A cancel that came while the job was being created is passed on now.
    if (job.cancel_requested && !job.cancel_sent) return cancelAtProvider(workspaceId, jobId);
    return sendFineTuning({ kind: 'follow', workspace_id: workspaceId, job_id: jobId });
  }
  if (job.cancel_requested) {
    // Cancelled before it reached the provider: it ends here.
    const cancelled = await updateFineTuningJob(workspaceId, jobId, {
      set: { status: 'cancelled', finished_at: now() },
      remove: ['sealed_options'],
      from: ['validating_files'],
    });
    if (cancelled) {
      await recordEvent(job, 'Cancelled before it was sent to the provider.');
      await clearUnfinishedJob(jobId);
    }
    return;
  }
  const lineOptions = await optionsOf(job);
  try {
    const upload = async (fileId: string) =>
      uploadProviderFile(job!, lineOptions, await fileBytes(workspaceId, fileId), { purpose: 'fine-tune', filename: `${fileId}.jsonl` });
    if (!job.provider_training_file) {
      const updated = await updateFineTuningJob(workspaceId, jobId, { set: { provider_training_file: await upload(job.training_file) }, from: unfinished });
      if (!updated) return; // cancelled meanwhile
      job = updated;
    }
    if (job.validation_file && !job.provider_validation_file) {
      const updated = await updateFineTuningJob(workspaceId, jobId, { set: { provider_validation_file: await upload(job.validation_file) }, from: unfinished });
      if (!updated) return;
      job = updated;
    }
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
    const created = await callJson<ProviderJob>(job, lineOptions, {
      method: 'POST',
      path: 'fine_tuning/jobs',
      body: Buffer.from(JSON.stringify(body)),
      contentType: 'application/json',
    });
    if (typeof created.id !== 'string')
      throw new GatewayError(502, 'The provider answered without a fine-tuning job id.', { code: 'provider_invalid_response' });
    const recorded = await updateFineTuningJob(workspaceId, jobId, {
      set: { provider_job_id: created.id, follows: 0, ...mirrored(created) },
      from: unfinished,
    });
    if (!recorded) {
      // Cancelled while it was being created: the provider's job is cancelled too.
      await callJson(job, lineOptions, { method: 'POST', path: `fine_tuning/jobs/${encodeURIComponent(created.id)}/cancel`, body: Buffer.alloc(0) });
      return;
    }
    await recordEvent(job, `Created at ${job.provider} as ${created.id}.`);
    if (recorded.cancel_requested && !recorded.cancel_sent) return cancelAtProvider(workspaceId, jobId);
  } catch (error) {
    // A provider that refuses the job (4xx) ends it; anything else is tried again by redelivery.
    if (error instanceof GatewayError && error.status >= 400 && error.status < 500 && error.status !== 429) {
      return failJob(job, { code: error.code ?? 'provider_refused', message: error.message, param: error.param });
    }
    throw error;
  }
  await sendFineTuning({ kind: 'follow', workspace_id: workspaceId, job_id: jobId }, followDelay(0));
}

/** The provider job's fields the gateway's job mirrors (its own ids stay the gateway's). */
function mirrored(answer: ProviderJob): Partial<FineTuningJobItem> {
  const status = statuses.includes(answer.status as FineTuningStatus) ? (answer.status as FineTuningStatus) : undefined;
  return {
    ...(status && !isFinal(status) ? { status } : {}),
    fine_tuned_model: answer.fine_tuned_model ?? null,
    trained_tokens: answer.trained_tokens ?? null,
    estimated_finish: answer.estimated_finish ?? null,
    ...(answer.hyperparameters ? { hyperparameters: answer.hyperparameters } : {}),
  };
}

export async function followJob(workspaceId: string, jobId: string): Promise<void> {
  const job = await getFineTuningJob(workspaceId, jobId);
  if (!job || isFinal(job.status) || !job.provider_job_id || !job.sealed_options) return;
  const lineOptions = await optionsOf(job);
  const follows = (job.follows ?? 0) + 1;
  let answer: ProviderJob;
  try {
    answer = await callJson<ProviderJob>(job, lineOptions, { method: 'GET', path: `fine_tuning/jobs/${encodeURIComponent(job.provider_job_id)}` });
    await mirrorEvents(job, lineOptions);
    await mirrorCheckpoints(job, lineOptions);
  } catch (error) {
    const since = job.provider_unanswered_since ?? now();
    if (now() - since >= providerSilenceLimitSeconds()) {
      return failJob(job, {
        code: 'provider_unanswered',
        message: `${job.provider} did not answer about job ${job.provider_job_id} for ${now() - since} s (the limit is ${providerSilenceLimitSeconds()} s); its last answer: ${(error as Error).message}`,
        param: null,
      });
    }
    await updateFineTuningJob(workspaceId, jobId, { set: { follows }, setIfAbsent: { provider_unanswered_since: since }, from: unfinished });
    return sendFineTuning({ kind: 'follow', workspace_id: workspaceId, job_id: jobId }, followDelay(follows));
  }
  const status = answer.status as FineTuningStatus;
  if (isFinal(status)) return endJob(job, lineOptions, answer, status);
  // Whichever worker saw the cancel first, it reaches the provider once.
  if (job.cancel_requested && !job.cancel_sent) return cancelAtProvider(workspaceId, jobId);
  await updateFineTuningJob(workspaceId, jobId, {
    set: { follows, ...mirrored(answer) },
    remove: ['provider_unanswered_since'],
    from: unfinished,
  });
  await sendFineTuning({ kind: 'follow', workspace_id: workspaceId, job_id: jobId }, followDelay(follows));
}

/** The provider's events, stored under their own ids (a second look stores the same items). */
async function mirrorEvents(job: FineTuningJobItem, lineOptions: LineOptions): Promise<void> {
  const page = await callJson<{ data?: { id?: string; created_at?: number; level?: string; message?: string; type?: string; data?: unknown }[] }>(
    job,
    lineOptions,
    {
      method: 'GET',
      path: `fine_tuning/jobs/${encodeURIComponent(job.provider_job_id!)}/events`,
    },
  );
  for (const event of page.data ?? []) {
    if (typeof event.id !== 'string') continue;
    await putFineTuningEvent(job.workspace_id, job.id, {
      id: event.id,
      object: 'fine_tuning.job.event',
      created_at: event.created_at ?? now(),
      level: event.level === 'warn' || event.level === 'error' ? event.level : 'info',
      message: event.message ?? '',
      type: event.type === 'metrics' ? 'metrics' : 'message',
      data: event.data,
    });
  }
}

/** The provider's checkpoints, under the gateway's job id (a second look stores the same items). */
async function mirrorCheckpoints(job: FineTuningJobItem, lineOptions: LineOptions): Promise<void> {
  const page = await callJson<{
    data?: { id?: string; created_at?: number; fine_tuned_model_checkpoint?: string; step_number?: number; metrics?: Record<string, number> }[];
  }>(job, lineOptions, { method: 'GET', path: `fine_tuning/jobs/${encodeURIComponent(job.provider_job_id!)}/checkpoints` });
  for (const checkpoint of page.data ?? []) {
    if (typeof checkpoint.id !== 'string' || typeof checkpoint.step_number !== 'number') continue;
    await putFineTuningCheckpoint(job.workspace_id, {
      id: checkpoint.id,
      object: 'fine_tuning.job.checkpoint',
      created_at: checkpoint.created_at ?? now(),
      fine_tuned_model_checkpoint: checkpoint.fine_tuned_model_checkpoint ?? '',
      step_number: checkpoint.step_number,
      metrics: checkpoint.metrics ?? {},
      fine_tuning_job_id: job.id,
    });
  }
}

/** Copies the result files home (gateway ids fixed first) and ends the job as the provider did. */
async function endJob(job: FineTuningJobItem, lineOptions: LineOptions, answer: ProviderJob, status: FineTuningStatus): Promise<void> {
  const providerFiles = answer.result_files ?? [];
  // The gateway ids of the result files are fixed before any is written: a second run writes the same files.
  const planned = await updateFineTuningJob(job.workspace_id, job.id, {
    setIfAbsent: { planned_result_files: providerFiles.map(() => newId(gatewayFileIdPrefix)) },
    from: unfinished,
  });
  if (!planned) return;
  const gatewayIds = planned.planned_result_files ?? [];
  for (const [index, providerFileId] of providerFiles.entries()) {
    const writer = new FileWriter(job.workspace_id, { id: gatewayIds[index]!, purpose: 'fine-tune-results', filename: `${job.id}_results_${index + 1}.csv` });
    for await (const { text } of fileLines(await providerFileContent(job, lineOptions, providerFileId))) await writer.write(`${text}\n`);
    await writer.close();
  }
  const error = answer.error?.message
    ? { code: answer.error.code ?? 'provider_error', message: answer.error.message, param: answer.error.param ?? null }
    : null;
  const ended = await updateFineTuningJob(job.workspace_id, job.id, {
    set: { ...mirrored(answer), status, finished_at: answer.finished_at ?? now(), error, result_files: gatewayIds },
    remove: ['sealed_options'],
    from: unfinished,
  });
  if (!ended) return;
  await recordEvent(
    job,
    providerFiles.length ? `The job ${status}; its ${providerFiles.length} result file(s) copied to ${gatewayIds.join(', ')}.` : `The job ${status}.`,
  );
  await clearUnfinishedJob(job.id);
}

export async function cancelAtProvider(workspaceId: string, jobId: string): Promise<void> {
  const job = await getFineTuningJob(workspaceId, jobId);
  if (!job || isFinal(job.status)) return;
  // Not at the provider yet: the start step sees the cancel and ends the job there.
  if (!job.provider_job_id) return startJob(workspaceId, jobId);
  await callJson(job, await optionsOf(job), {
    method: 'POST',
    path: `fine_tuning/jobs/${encodeURIComponent(job.provider_job_id)}/cancel`,
    body: Buffer.alloc(0),
  });
  await updateFineTuningJob(workspaceId, jobId, { set: { cancel_sent: true } });
  await sendFineTuning({ kind: 'follow', workspace_id: workspaceId, job_id: jobId }, firstFollowSeconds());
}

/** Follows every unfinished job again: queue messages may be lost, DynamoDB keeps the jobs. */
export async function resumeUnfinishedJobs(): Promise<number> {
  const unfinished = await listUnfinishedJobs();
  for (const { workspace_id, id } of unfinished) await sendFineTuning({ kind: 'start', workspace_id, job_id: id });
  return unfinished.length;
}
