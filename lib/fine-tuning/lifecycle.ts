/**
 * The fine-tuning queue's worker: `start` uploads the job's gateway files to the provider and
 * creates the provider's job; `follow` looks at it (delayed, with backoff), mirroring its status,
 * fields, events and checkpoints, and once it ends copies its result files home as gateway files;
 * `cancel` passes a cancel on. Each step is recorded before the next, and every write is keyed or
 * conditional, so a message delivered twice or a worker that dies converges on the same job. What
 * is said to the provider, in its own dialect, is its API's (fine-tuning-apis.ts).
 */
import { GatewayError } from '../core/errors';
import { newId } from '../core/ids';
import { fileLines } from '../core/text-lines';
import { FileWriter } from '../files/file-writer';
import { gatewayFileIdPrefix } from '../files/provider-selection';
import { followDelay, firstFollowSeconds, providerSilenceLimitSeconds } from '../provider-jobs/follow';
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
import { fineTuningApiOf } from './fine-tuning-apis';
import { finalJobStatuses, recordEvent } from './jobs';
import type { ProviderFineTuningApi, ProviderJobState } from './provider-api';

const unfinished: readonly FineTuningStatus[] = ['validating_files', 'queued', 'running'];
const now = () => Math.floor(Date.now() / 1000);
const isFinal = (status: string | undefined) => (finalJobStatuses as readonly (string | undefined)[]).includes(status);

/** What a worker needs of a job to speak to its provider. */
async function providerOf(job: FineTuningJobItem): Promise<{ api: ProviderFineTuningApi; lineOptions: LineOptions }> {
  const api = fineTuningApiOf(job.provider);
  // Only a job whose provider lost its API in an upgrade gets here; it cannot go on.
  if (!api) throw new Error(`No fine-tuning API for provider ${job.provider}.`);
  return { api, lineOptions: await openLineOptions(job.workspace_id, job.sealed_options as unknown as EncryptedBlob) };
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
  const { api, lineOptions } = await providerOf(job);
  try {
    if (!job.provider_training_file) {
      const uploaded = await api.uploadFile(job, lineOptions, await fileBytes(workspaceId, job.training_file), 'training');
      const updated = await updateFineTuningJob(workspaceId, jobId, { set: { provider_training_file: uploaded }, from: unfinished });
      if (!updated) return; // cancelled meanwhile
      job = updated;
    }
    if (job.validation_file && !job.provider_validation_file) {
      const uploaded = await api.uploadFile(job, lineOptions, await fileBytes(workspaceId, job.validation_file), 'validation');
      const updated = await updateFineTuningJob(workspaceId, jobId, { set: { provider_validation_file: uploaded }, from: unfinished });
      if (!updated) return;
      job = updated;
    }
    const created = await api.create(job, lineOptions);
    const recorded = await updateFineTuningJob(workspaceId, jobId, {
      set: { provider_job_id: created.id, follows: 0, ...mirrored(created.state) },
      from: unfinished,
    });
    if (!recorded) {
      // Cancelled while it was being created: the provider's job is cancelled too.
      await api.cancel(job, lineOptions, created.id);
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

/** The provider job's fields the gateway's job mirrors while it runs (its own ids stay the gateway's). */
function mirrored(state: ProviderJobState): Partial<FineTuningJobItem> {
  return {
    ...(state.status && !isFinal(state.status) ? { status: state.status } : {}),
    fine_tuned_model: state.fine_tuned_model ?? null,
    trained_tokens: state.trained_tokens ?? null,
    estimated_finish: state.estimated_finish ?? null,
    ...(state.hyperparameters ? { hyperparameters: state.hyperparameters } : {}),
  };
}

export async function followJob(workspaceId: string, jobId: string): Promise<void> {
  const job = await getFineTuningJob(workspaceId, jobId);
  if (!job || isFinal(job.status) || !job.provider_job_id || !job.sealed_options) return;
  const { api, lineOptions } = await providerOf(job);
  const follows = (job.follows ?? 0) + 1;
  let state: ProviderJobState;
  try {
    state = await api.look(job, lineOptions, job.provider_job_id);
    // Events and checkpoints are stored under their own ids: a second look stores the same items.
    for (const event of await api.events(job, lineOptions, job.provider_job_id)) await putFineTuningEvent(workspaceId, jobId, event);
    for (const checkpoint of await api.checkpoints(job, lineOptions, job.provider_job_id)) await putFineTuningCheckpoint(workspaceId, checkpoint);
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
  if (state.status && isFinal(state.status)) return endJob(job, api, lineOptions, state, state.status);
  // Whichever worker saw the cancel first, it reaches the provider once.
  if (job.cancel_requested && !job.cancel_sent) return cancelAtProvider(workspaceId, jobId);
  await updateFineTuningJob(workspaceId, jobId, {
    set: { follows, ...mirrored(state) },
    remove: ['provider_unanswered_since'],
    from: unfinished,
  });
  await sendFineTuning({ kind: 'follow', workspace_id: workspaceId, job_id: jobId }, followDelay(follows));
}

/** Copies the result files home (gateway ids fixed first) and ends the job as the provider did. */
async function endJob(
  job: FineTuningJobItem,
  api: ProviderFineTuningApi,
  lineOptions: LineOptions,
  state: ProviderJobState,
  status: FineTuningStatus,
): Promise<void> {
  const providerFiles = state.result_files ?? [];
  // The gateway ids of the result files are fixed before any is written: a second run writes the same files.
  const planned = await updateFineTuningJob(job.workspace_id, job.id, {
    setIfAbsent: { planned_result_files: providerFiles.map(() => newId(gatewayFileIdPrefix)) },
    from: unfinished,
  });
  if (!planned) return;
  const gatewayIds = planned.planned_result_files ?? [];
  for (const [index, providerFileId] of providerFiles.entries()) {
    const writer = new FileWriter(job.workspace_id, { id: gatewayIds[index]!, purpose: 'fine-tune-results', filename: `${job.id}_results_${index + 1}.csv` });
    for await (const { text } of fileLines(await api.resultFile(job, lineOptions, providerFileId))) await writer.write(`${text}\n`);
    await writer.close();
  }
  const ended = await updateFineTuningJob(job.workspace_id, job.id, {
    set: { ...mirrored(state), status, finished_at: state.finished_at ?? now(), error: state.error ?? null, result_files: gatewayIds },
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
  const { api, lineOptions } = await providerOf(job);
  await api.cancel(job, lineOptions, job.provider_job_id);
  await updateFineTuningJob(workspaceId, jobId, { set: { cancel_sent: true } });
  await sendFineTuning({ kind: 'follow', workspace_id: workspaceId, job_id: jobId }, firstFollowSeconds());
}

/** Follows every unfinished job again: queue messages may be lost, DynamoDB keeps the jobs. */
export async function resumeUnfinishedJobs(): Promise<number> {
  const unfinished = await listUnfinishedJobs();
  for (const { workspace_id, id } of unfinished) await sendFineTuning({ kind: 'start', workspace_id, job_id: id });
  return unfinished.length;
}
