/**
 * Mistral's fine-tuning API as a provider fine-tuning API. What it says, and so what the gateway does:
 *
 * - Training data is uploaded with `POST /files`, multipart, `purpose=fine-tune`; Mistral takes
 *   OpenAI's chat JSONL as it is, so the gateway's files are uploaded unchanged.
 * - `POST /fine_tuning/jobs` takes `model`, `training_files: [{file_id, weight}]` (weight 1 by
 *   default), `validation_files: [id]`, `suffix`, `integrations` (W&B, with the W&B API key in it),
 *   `auto_start` and `hyperparameters` (`training_steps`, `learning_rate` — a peak rate, 1e-4 by
 *   default —, `weight_decay`, `warmup_fraction`, `epochs`, `seq_len`, `fim_ratio`). A job created
 *   with `auto_start` false waits, validated, for `POST /fine_tuning/jobs/{id}/start`: the gateway
 *   sends `auto_start: true`, so that a job trains once validated as at OpenAI.
 * - Mistral refuses fields it does not know, so only the fields above are sent. OpenAI's fields it has
 *   no counterpart for fail the job here, with a message that says what to send instead:
 *   `hyperparameters.learning_rate_multiplier` and `batch_size` (other than "auto"), a `method` other
 *   than supervised, and `integrations` (OpenAI's W&B integration carries no W&B key, which Mistral's
 *   needs; putting one in the job would store and show it). `n_epochs` is Mistral's `epochs`;
 *   Mistral's own hyperparameter names pass through. `seed` is ignored: Mistral takes none.
 * - `GET /fine_tuning/jobs/{id}` answers the job with its `events` (`name`, `data`, `created_at`; a
 *   `status-updated` event's data names the status) and `checkpoints` (`metrics` — `train_loss`,
 *   `valid_loss`, `valid_mean_token_accuracy` —, `step_number`, `created_at`), newest first; there
 *   is no events or checkpoints route of its own and no result file. Its statuses are QUEUED,
 *   STARTED, VALIDATING, VALIDATED, RUNNING, FAILED_VALIDATION, FAILED, SUCCESS, CANCELLED and
 *   CANCELLATION_REQUESTED (`statuses` below has OpenAI's word for each). The job object carries no
 *   error: a failed job's reason is taken from its newest event whose data has one, if any.
 * - `POST /fine_tuning/jobs/{id}/cancel` asks for a cancel.
 * @see https://docs.mistral.ai/capabilities/finetuning/text_vision_finetuning
 * @see https://docs.mistral.ai/guides/finetuning/
 * @see https://docs.mistral.ai/api/#tag/fine-tuning
 * @see https://docs.mistral.ai/resources/changelogs
 */
import { createHash } from 'node:crypto';
import { badRequest, GatewayError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { callJson, uploadProviderFile, postJson } from '../provider-jobs/provider-calls';
import type { LineOptions } from '../provider-jobs/sealed-options';
import type { FineTuningCheckpoint, FineTuningEvent, FineTuningJobItem, FineTuningStatus } from '../store/fine-tuning-jobs';
import type { ProviderFineTuningApi, ProviderJobState } from './provider-api';

/** Mistral's fine-tuning job, the fields the gateway reads. */
interface MistralJob {
  id?: unknown;
  status?: unknown;
  fine_tuned_model?: string | null;
  trained_tokens?: number | null;
  modified_at?: number;
  events?: { name?: string; data?: Record<string, unknown> | null; created_at?: number }[];
  checkpoints?: { metrics?: Record<string, unknown> | null; step_number?: number; created_at?: number }[];
}

/**
 * Mistral's statuses in OpenAI's words. Mistral queues a job before it validates the files, so its
 * validation is `queued` too: mapped to `validating_files`, a job would go back a state after
 * `queued`. A cancel Mistral has not carried out yet leaves the job `running`.
 */
const statuses: Record<string, FineTuningStatus> = {
  QUEUED: 'queued',
  STARTED: 'queued',
  VALIDATING: 'queued',
  VALIDATED: 'queued',
  RUNNING: 'running',
  CANCELLATION_REQUESTED: 'running',
  SUCCESS: 'succeeded',
  FAILED: 'failed',
  FAILED_VALIDATION: 'failed',
  CANCELLED: 'cancelled',
};

/** Mistral's own hyperparameters, sent as given. */
const mistralHyperparameters = ['training_steps', 'learning_rate', 'weight_decay', 'warmup_fraction', 'epochs', 'seq_len', 'fim_ratio'];

const isAuto = (value: unknown) => value === undefined || value === null || value === 'auto';

/** Mistral's hyperparameters for the job's OpenAI ones (top-level, or the supervised method's); a field it cannot take is refused. */
function hyperparametersOf(job: FineTuningJobItem): Record<string, unknown> {
  const method = job.method;
  if (method !== undefined && method.type !== 'supervised') {
    throw badRequest(
      `Mistral's fine-tuning API trains supervised only; method.type ${JSON.stringify(method.type ?? null)} cannot run there.`,
      'method.type',
      'unsupported_parameter',
    );
  }
  const supervised = isPlainObject(method?.supervised) && isPlainObject(method.supervised.hyperparameters) ? method.supervised.hyperparameters : {};
  const given: Record<string, unknown> = { ...job.hyperparameters, ...supervised };
  const mapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    if (name === 'n_epochs') {
      if (isAuto(value)) continue;
      if (given.epochs !== undefined && given.epochs !== value)
        throw badRequest('hyperparameters.n_epochs and epochs (Mistral’s name for it) differ; give one.', 'hyperparameters.n_epochs', 'unsupported_parameter');
      mapped.epochs = value;
    } else if (name === 'learning_rate_multiplier') {
      if (isAuto(value)) continue;
      throw badRequest(
        'Mistral takes an absolute (peak) learning rate, not a multiplier of a default it does not publish as one: leave learning_rate_multiplier "auto" and give hyperparameters.learning_rate (Mistral’s default is 0.0001).',
        'hyperparameters.learning_rate_multiplier',
        'unsupported_parameter',
      );
    } else if (name === 'batch_size') {
      if (isAuto(value)) continue;
      throw badRequest(
        'Mistral’s fine-tuning API has no batch size: leave batch_size "auto" (Mistral’s training_steps, epochs and seq_len set how much is trained).',
        'hyperparameters.batch_size',
        'unsupported_parameter',
      );
    } else if (mistralHyperparameters.includes(name)) {
      mapped[name] = value;
    } else {
      throw badRequest(
        `Mistral's fine-tuning API has no hyperparameter ${JSON.stringify(name)}; it takes n_epochs and Mistral's own ${mistralHyperparameters.join(', ')}.`,
        `hyperparameters.${name}`,
        'unsupported_parameter',
      );
    }
  }
  return mapped;
}

function refuseIntegrations(job: FineTuningJobItem): void {
  if (job.integrations?.length) {
    throw badRequest(
      'Mistral’s W&B integration needs the W&B API key in the job, which OpenAI’s integration does not carry (and the gateway would store and show): leave integrations out, or create the job at Mistral directly.',
      'integrations',
      'unsupported_parameter',
    );
  }
}

/** Mistral's create body for the job; throws what Mistral could not take, before anything is sent. */
function createBody(job: FineTuningJobItem): Record<string, unknown> {
  refuseIntegrations(job);
  return {
    model: job.model,
    training_files: [{ file_id: job.provider_training_file, weight: 1 }],
    ...(job.provider_validation_file ? { validation_files: [job.provider_validation_file] } : {}),
    ...(job.suffix ? { suffix: job.suffix } : {}),
    hyperparameters: hyperparametersOf(job),
    auto_start: true,
  };
}

const checkedJob = (answer: MistralJob) => {
  if (typeof answer?.id !== 'string' || typeof answer.status !== 'string') {
    throw new GatewayError(502, 'Mistral answered with something that is not a fine-tuning job.', {
      code: 'provider_invalid_response',
      provider: 'mistral-ai',
    });
  }
  return answer as MistralJob & { id: string; status: string };
};

const eventsOf = (answer: MistralJob) => (Array.isArray(answer.events) ? answer.events : []);

/** The reason an event gives, when its data has one. */
function reasonOf(data: Record<string, unknown> | null | undefined): string | undefined {
  for (const key of ['error', 'message', 'reason']) {
    const value = data?.[key];
    if (typeof value === 'string' && value) return value;
    if (isPlainObject(value) && typeof value.message === 'string' && value.message) return value.message;
  }
  return undefined;
}

function errorOf(status: string, answer: MistralJob): ProviderJobState['error'] {
  const newest = [...eventsOf(answer)].sort((a, b) => (b.created_at ?? 0) - (a.created_at ?? 0));
  const reason = newest.map((event) => reasonOf(event.data)).find(Boolean);
  return {
    code: status === 'FAILED_VALIDATION' ? 'failed_validation' : 'training_failed',
    message: reason ?? `Mistral ended the job with status ${status} without giving a reason.`,
    param: null,
  };
}

function stateOf(answer: MistralJob & { status: string }): ProviderJobState {
  const status = statuses[answer.status];
  const ended = status === 'succeeded' || status === 'failed' || status === 'cancelled';
  return {
    status,
    fine_tuned_model: answer.fine_tuned_model ?? null,
    trained_tokens: answer.trained_tokens ?? null,
    estimated_finish: null,
    // Mistral's job has no end time; its last change is when it ended.
    finished_at: ended && typeof answer.modified_at === 'number' ? answer.modified_at : null,
    result_files: [],
    error: status === 'failed' ? errorOf(answer.status, answer) : null,
  };
}

/**
 * The job as the last look answered it, for the events and checkpoints the same follow-up asks for
 * next: Mistral has them in the job object only, so one GET serves the three. A look always asks
 * anew; an answer older than this is asked again.
 */
const reuseAnswerMs = 30_000;
const recentAnswers = new Map<string, { at: number; answer: MistralJob & { id: string; status: string } }>();

const answerKey = (job: FineTuningJobItem, providerJobId: string) => `${job.id}#${providerJobId}`;

async function fetchJob(job: FineTuningJobItem, lineOptions: LineOptions, providerJobId: string) {
  const answer = checkedJob(await callJson<MistralJob>(job, lineOptions, { method: 'GET', path: jobPath(providerJobId) }));
  const now = Date.now();
  for (const [key, entry] of recentAnswers) if (now - entry.at > reuseAnswerMs) recentAnswers.delete(key);
  recentAnswers.set(answerKey(job, providerJobId), { at: now, answer });
  return answer;
}

async function recentJob(job: FineTuningJobItem, lineOptions: LineOptions, providerJobId: string) {
  const entry = recentAnswers.get(answerKey(job, providerJobId));
  return entry && Date.now() - entry.at <= reuseAnswerMs ? entry.answer : fetchJob(job, lineOptions, providerJobId);
}

const jobPath = (id: string, rest = '') => `fine_tuning/jobs/${encodeURIComponent(id)}${rest}`;

/** An id of the gateway's for an item Mistral gives none: the same item, looked at again, has the same id. */
const derivedId = (prefix: string, ...parts: unknown[]) => `${prefix}${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 24)}`;

function eventOf(providerJobId: string, event: NonNullable<MistralJob['events']>[number]): FineTuningEvent {
  const name = typeof event.name === 'string' ? event.name : 'event';
  const data = isPlainObject(event.data) ? event.data : undefined;
  const status = typeof data?.status === 'string' ? data.status : undefined;
  const reason = reasonOf(data);
  const failed = reason !== undefined || status === 'FAILED' || status === 'FAILED_VALIDATION';
  const said = name === 'status-updated' && status ? `Mistral job status ${status}.` : `Mistral event ${name}.`;
  const createdAt = typeof event.created_at === 'number' ? event.created_at : 0;
  return {
    // The data is part of the id: two events of a name may share a second.
    id: derivedId('ftevent-', providerJobId, createdAt, name, data ?? null),
    object: 'fine_tuning.job.event',
    created_at: createdAt,
    level: failed ? 'error' : 'info',
    message: reason ? `${said} ${reason}` : said,
    type: 'message',
    ...(data ? { data } : {}),
  };
}

function checkpointOf(job: FineTuningJobItem, providerJobId: string, checkpoint: NonNullable<MistralJob['checkpoints']>[number]): FineTuningCheckpoint[] {
  const step = checkpoint.step_number;
  if (typeof step !== 'number') return [];
  const metrics: Record<string, number> = { step };
  for (const [name, value] of Object.entries(checkpoint.metrics ?? {})) if (typeof value === 'number' && Number.isFinite(value)) metrics[name] = value;
  return [
    {
      id: derivedId('ftckpt-', providerJobId, step),
      object: 'fine_tuning.job.checkpoint',
      created_at: typeof checkpoint.created_at === 'number' ? checkpoint.created_at : 0,
      // Mistral serves the job's final model only: a checkpoint is named by its job and step, not a model to call.
      fine_tuned_model_checkpoint: `${providerJobId}:ckpt-step-${step}`,
      step_number: step,
      metrics,
      fine_tuning_job_id: job.id,
    },
  ];
}

export const mistralFineTuningApi: ProviderFineTuningApi = {
  check(job) {
    refuseIntegrations(job);
    hyperparametersOf(job);
  },
  uploadFile(job, lineOptions, content, role) {
    // A job Mistral could not take is refused before its data is uploaded.
    if (role === 'training') {
      refuseIntegrations(job);
      hyperparametersOf(job);
    }
    const fileId = role === 'training' ? job.training_file : job.validation_file;
    return uploadProviderFile(job, lineOptions, content, { purpose: 'fine-tune', filename: `${fileId}.jsonl` });
  },
  async create(job, lineOptions) {
    const created = checkedJob(await postJson<MistralJob>(job, lineOptions, 'fine_tuning/jobs', createBody(job)));
    return { id: created.id, state: stateOf(created) };
  },
  async look(job, lineOptions, providerJobId) {
    return stateOf(await fetchJob(job, lineOptions, providerJobId));
  },
  async cancel(job, lineOptions, providerJobId) {
    recentAnswers.delete(answerKey(job, providerJobId));
    await callJson(job, lineOptions, { method: 'POST', path: jobPath(providerJobId, '/cancel'), body: Buffer.alloc(0) });
  },
  async events(job, lineOptions, providerJobId) {
    return eventsOf(await recentJob(job, lineOptions, providerJobId)).map((event) => eventOf(providerJobId, event));
  },
  async checkpoints(job, lineOptions, providerJobId) {
    const answer = await recentJob(job, lineOptions, providerJobId);
    return (Array.isArray(answer.checkpoints) ? answer.checkpoints : []).flatMap((checkpoint) => checkpointOf(job, providerJobId, checkpoint));
  },
  async resultFile() {
    // Mistral's jobs write no result file, so `look` names none and this is never asked.
    throw new GatewayError(500, 'Mistral’s fine-tuning jobs have no result files.', { code: 'provider_invalid_response', provider: 'mistral-ai' });
  },
};
