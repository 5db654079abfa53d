/**
 * Together AI's fine-tuning API, which is not OpenAI's: files go up through `/files/upload`, jobs
 * live under `/fine-tunes`, its states and hyperparameters have names of their own, its events and
 * checkpoints carry no ids, and a failed job says why only in its events. What OpenAI's create asks
 * for and Together cannot do fails the job with a 400 before anything is uploaded, rather than
 * running a different job than the one asked for. Nothing is copied home when a job ends: Together
 * documents no results file, only the weights (`/finetune/download`), which stay at Together.
 * @see https://docs.together.ai/reference/upload-file (POST /files/upload: purpose, file_name, file_type, file)
 * @see https://docs.together.ai/reference/post-fine-tunes (POST /fine-tunes: the body, FinetuneResponseTruncated)
 * @see https://docs.together.ai/reference/get-fine-tunes-id (GET /fine-tunes/{id}: status, model_output_name, token_count, events)
 * @see https://docs.together.ai/reference/post-fine-tunes-id-cancel (POST /fine-tunes/{id}/cancel)
 * @see https://docs.together.ai/reference/get-fine-tunes-id-events (FineTuneEvent: created_at a date-time string, level, type, hash)
 * @see https://docs.together.ai/reference/get-fine-tunes-id-checkpoint (FineTuneCheckpoint: step, created_at, path, checkpoint_type)
 * @see https://docs.together.ai/reference/get-finetune-download (the weights: a compressed model, not a results file)
 * @see https://docs.together.ai/docs/fine-tuning/data-preparation (conversational `messages` lines, OpenAI's own)
 * @see https://docs.together.ai/docs/fine-tuning/preference-tuning (DPO lines: input.messages, preferred_output, non_preferred_output, OpenAI's own)
 * @see https://github.com/togethercomputer/openapi/blob/main/openapi.yaml (FinetuneJobStatus, FinetuneEventLevels, ErrorData)
 */
import { createHash, randomBytes } from 'node:crypto';
import { badRequest, GatewayError } from '../core/errors';
import { callJson, postJson } from '../provider-jobs/provider-calls';
import { putFineTuningEvent, type FineTuningJobItem, type FineTuningStatus } from '../store/fine-tuning-jobs';
import type { ProviderFineTuningApi, ProviderJobState } from './provider-api';

/** Together's job (FinetuneResponse), the fields the gateway reads. */
interface TogetherJob {
  id?: unknown;
  status?: unknown;
  model_output_name?: unknown;
  token_count?: unknown;
  updated_at?: unknown;
  n_epochs?: unknown;
  batch_size?: unknown;
  events?: TogetherEvent[];
}

interface TogetherEvent {
  created_at?: unknown;
  level?: unknown;
  message?: unknown;
  type?: unknown;
  step?: unknown;
  hash?: unknown;
}

interface TogetherCheckpoint {
  step?: unknown;
  created_at?: unknown;
  path?: unknown;
  checkpoint_type?: unknown;
}

/** FinetuneJobStatus in OpenAI's words: everything between queued and done is still running for a client. */
const statuses: Record<string, FineTuningStatus> = {
  pending: 'queued',
  queued: 'queued',
  running: 'running',
  compressing: 'running',
  uploading: 'running',
  // Not over until Together says `cancelled`; the gateway's job stays unfinished and is looked at again.
  cancel_requested: 'running',
  completed: 'succeeded',
  error: 'failed',
  cancelled: 'cancelled',
};

const finalStatuses: readonly FineTuningStatus[] = ['succeeded', 'failed', 'cancelled'];

/** A Together date-time in Unix seconds; undefined when it is not one. */
function seconds(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const time = Date.parse(value);
  return Number.isFinite(time) ? Math.floor(time / 1000) : undefined;
}

const positiveInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value > 0;
const isAuto = (value: unknown) => value === undefined || value === null || value === 'auto';

/** A stable id from what identifies an item: the same item looked at again gets the same id. */
function derivedId(prefix: string, parts: unknown[]): string {
  return `${prefix}_${createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 32)}`;
}

function unsupported(message: string, param: string): GatewayError {
  return badRequest(`Together AI cannot run this job: ${message}`, param, 'unsupported_parameter');
}

/** The hyperparameters of each of OpenAI's methods that Together has a counterpart for (`createBody` says which and how). */
const methodHyperparameters: Record<string, readonly string[]> = {
  supervised: ['n_epochs', 'batch_size', 'learning_rate_multiplier'],
  dpo: ['n_epochs', 'batch_size', 'learning_rate_multiplier', 'beta'],
};

/**
 * OpenAI's method: its type (supervised unless said otherwise) and its hyperparameters, the method's
 * over the deprecated top-level ones, each with the field it came from.
 */
function methodOf(job: FineTuningJobItem): { type: string; hyperparameters: Record<string, unknown>; paramOf: (name: string) => string } {
  const type = typeof job.method?.type === 'string' ? job.method.type : 'supervised';
  if (!Object.hasOwn(methodHyperparameters, type)) {
    throw unsupported(`method "${type}" has no counterpart there; it trains with "supervised" (SFT) and "dpo".`, 'method.type');
  }
  const settings = job.method?.[type];
  const own = settings && typeof settings === 'object' ? (settings as { hyperparameters?: unknown }).hyperparameters : undefined;
  const methodOwn = own && typeof own === 'object' ? (own as Record<string, unknown>) : {};
  return {
    type,
    hyperparameters: { ...job.hyperparameters, ...methodOwn },
    paramOf: (name) => (Object.hasOwn(methodOwn, name) ? `method.${type}.hyperparameters.${name}` : `hyperparameters.${name}`),
  };
}

/** The wandb integrations the job asked for, which Together cannot honour from OpenAI's fields (see `createBody`). */
function wandbIntegrations(job: FineTuningJobItem): number {
  let wandb = 0;
  for (const [index, integration] of (job.integrations ?? []).entries()) {
    const type = (integration as { type?: unknown } | null)?.type;
    if (type !== 'wandb') throw unsupported(`integration type ${JSON.stringify(type)} is not one it knows; only "wandb" is.`, `integrations[${index}].type`);
    wandb++;
  }
  return wandb;
}

/**
 * Together's create body for an OpenAI-shaped job. Only what means the same at both is sent; what
 * Together would read differently is refused, naming the field.
 */
function createBody(job: FineTuningJobItem): Record<string, unknown> {
  const method = methodOf(job);
  const allowed = methodHyperparameters[method.type]!;
  const body: Record<string, unknown> = {
    model: job.model,
    training_file: job.provider_training_file,
    validation_file: job.provider_validation_file ?? undefined,
    suffix: job.suffix ?? undefined,
    random_seed: job.seed ?? undefined,
  };
  for (const [name, value] of Object.entries(method.hyperparameters)) {
    const param = method.paramOf(name);
    if (!allowed.includes(name)) throw unsupported(`${name} is not a hyperparameter of OpenAI's ${method.type} method it can map.`, param);
    if (isAuto(value)) continue; // Together picks its own default, as "auto" asks.
    if (name === 'n_epochs' || name === 'batch_size') {
      if (!positiveInteger(value)) throw unsupported(`${name} must be "auto" or a positive integer.`, param);
      body[name] = value;
    } else if (name === 'learning_rate_multiplier') {
      // OpenAI scales a base rate of its choosing; Together takes the rate itself, so no multiplier means the same there.
      throw unsupported('it takes an absolute learning rate, not a multiplier of a base rate; leave learning_rate_multiplier "auto".', param);
    } else if (name === 'beta') {
      if (typeof value !== 'number' || !(value > 0)) throw unsupported('beta must be "auto" or a positive number.', param);
    }
  }
  if (method.type === 'dpo') {
    const beta = method.hyperparameters.beta;
    body.training_method = { method: 'dpo', ...(isAuto(beta) ? {} : { dpo_beta: beta }) };
  } else {
    // `auto` leaves the masking of prompts to Together, for the data's format, as its own SDK does unless told.
    body.training_method = { method: 'sft', train_on_inputs: 'auto' };
  }
  wandbIntegrations(job);
  return body;
}

/** The multipart body of Together's file upload (it needs `file_name`, which OpenAI's upload does not have). */
function uploadBody(content: Buffer, fileName: string): { body: Buffer; contentType: string } {
  const boundary = `gateway${randomBytes(12).toString('hex')}`;
  const field = (name: string, value: string) => Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  const body = Buffer.concat([
    field('purpose', 'fine-tune'),
    field('file_name', fileName),
    field('file_type', 'jsonl'),
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${fileName}"\r\ncontent-type: application/jsonl\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Why a failed job failed: Together says so only in its events (an error-level or `job_error` one), the latest last. */
function failureOf(events: TogetherEvent[] | undefined): string | undefined {
  const failures = (events ?? []).filter((event) => typeof event.message === 'string' && (isErrorLevel(event.level) || event.type === 'job_error'));
  const latest = failures.sort((a, b) => (seconds(a.created_at) ?? 0) - (seconds(b.created_at) ?? 0)).at(-1);
  return latest?.message as string | undefined;
}

const isErrorLevel = (level: unknown) => level === 'error' || level === 'legacy_ierror';
const isWarningLevel = (level: unknown) => level === 'warning' || level === 'legacy_iwarning';

function stateOf(job: FineTuningJobItem, answer: TogetherJob): ProviderJobState {
  const status = typeof answer.status === 'string' && Object.hasOwn(statuses, answer.status) ? statuses[answer.status] : undefined;
  const ended = status !== undefined && finalStatuses.includes(status);
  // Together reports the resolved values; OpenAI's job shows them in place of "auto". `batch_size` "max" is Together's own word and is not mirrored.
  const resolved = {
    ...(positiveInteger(answer.n_epochs) ? { n_epochs: answer.n_epochs } : {}),
    ...(positiveInteger(answer.batch_size) ? { batch_size: answer.batch_size } : {}),
  };
  return {
    status,
    // Together names the output model when the job is created; OpenAI's clients read a name as a model they can use, so it is shown once trained.
    fine_tuned_model: status === 'succeeded' && typeof answer.model_output_name === 'string' ? answer.model_output_name : null,
    trained_tokens: typeof answer.token_count === 'number' ? answer.token_count : null,
    // Together's progress estimate is to its next state, not to the end of the job.
    estimated_finish: null,
    finished_at: ended ? (seconds(answer.updated_at) ?? null) : null,
    ...(Object.keys(resolved).length ? { hyperparameters: { ...job.hyperparameters, ...resolved } } : {}),
    result_files: [],
    error:
      status === 'failed'
        ? { code: 'provider_error', message: failureOf(answer.events) ?? 'Together AI ended the job with status "error".', param: null }
        : null,
  };
}

const jobPath = (id: string, rest = '') => `fine-tunes/${encodeURIComponent(id)}${rest}`;

export const togetherFineTuningApi: ProviderFineTuningApi = {
  check(job) {
    createBody(job);
  },
  async uploadFile(job, lineOptions, content, role) {
    // A job Together cannot run fails before its files are uploaded there.
    createBody(job);
    const fileId = role === 'training' ? job.training_file : job.validation_file;
    const { body, contentType } = uploadBody(content, `${fileId}.jsonl`);
    const answer = await callJson<{ id?: unknown }>(job, lineOptions, { method: 'POST', path: 'files/upload', body, contentType });
    if (typeof answer.id !== 'string')
      throw new GatewayError(502, 'Together AI answered the file upload without a file id.', { code: 'provider_invalid_response' });
    return answer.id;
  },
  async create(job, lineOptions) {
    const body = createBody(job);
    if (wandbIntegrations(job)) {
      // OpenAI's wandb integration holds no W&B key (OpenAI keeps it in the organisation's settings), and
      // Together logs only with one in the job. Keyed by the job, so a create that runs again writes it once.
      await putFineTuningEvent(job.workspace_id, job.id, {
        id: `ftevent_${job.id}_wandb_ignored`,
        object: 'fine_tuning.job.event',
        created_at: job.created_at,
        level: 'warn',
        message:
          'The wandb integration is not passed to Together AI: it needs a Weights & Biases API key in the job, which OpenAI’s integration has no field for.',
        type: 'message',
      });
    }
    const created = await postJson<TogetherJob>(job, lineOptions, 'fine-tunes', body);
    if (typeof created.id !== 'string')
      throw new GatewayError(502, 'Together AI answered without a fine-tuning job id.', { code: 'provider_invalid_response' });
    return { id: created.id, state: stateOf(job, created) };
  },
  async look(job, lineOptions, providerJobId) {
    return stateOf(job, await callJson<TogetherJob>(job, lineOptions, { method: 'GET', path: jobPath(providerJobId) }));
  },
  async cancel(job, lineOptions, providerJobId) {
    await callJson(job, lineOptions, { method: 'POST', path: jobPath(providerJobId, '/cancel'), body: Buffer.alloc(0) });
  },
  async events(job, lineOptions, providerJobId) {
    const page = await callJson<{ data?: TogetherEvent[] }>(job, lineOptions, { method: 'GET', path: jobPath(providerJobId, '/events') });
    return (page.data ?? []).flatMap((event) => {
      if (typeof event.message !== 'string') return [];
      return [
        {
          // Together's events have no id: one is made of what the event is, so it is the same at every look.
          id: derivedId('ftevent', [providerJobId, event.created_at, event.type, event.message, event.step, event.hash]),
          object: 'fine_tuning.job.event' as const,
          // The store keys an event by its time too: a time Together does not give must not change between looks.
          created_at: seconds(event.created_at) ?? job.created_at,
          level: isErrorLevel(event.level) ? ('error' as const) : isWarningLevel(event.level) ? ('warn' as const) : ('info' as const),
          message: event.message,
          type: 'message' as const,
          data: { type: event.type, ...(typeof event.step === 'number' ? { step: event.step } : {}) },
        },
      ];
    });
  },
  async checkpoints(job, lineOptions, providerJobId) {
    const page = await callJson<{ data?: TogetherCheckpoint[] }>(job, lineOptions, { method: 'GET', path: jobPath(providerJobId, '/checkpoints') });
    return (page.data ?? []).flatMap((checkpoint) => {
      if (typeof checkpoint.step !== 'number') return [];
      const type = typeof checkpoint.checkpoint_type === 'string' ? checkpoint.checkpoint_type : '';
      return [
        {
          // A final checkpoint may come twice (merged and adapter) at one step: its type tells them apart.
          id: derivedId('ftckpt', [providerJobId, checkpoint.step, type, checkpoint.path]),
          object: 'fine_tuning.job.checkpoint' as const,
          created_at: seconds(checkpoint.created_at) ?? job.created_at,
          // How Together names a checkpoint to train from or download: `{job}:{step}` for an intermediate one, the job for the final model.
          fine_tuned_model_checkpoint: type.toLowerCase().includes('intermediate') ? `${providerJobId}:${checkpoint.step}` : providerJobId,
          step_number: checkpoint.step,
          metrics: { step: checkpoint.step },
          fine_tuning_job_id: job.id,
        },
      ];
    });
  },
  async resultFile() {
    // No job of Together's lists a result file (stateOf's result_files is always empty), so none is asked for.
    throw new GatewayError(500, 'Together AI fine-tuning jobs have no result files to copy.', { code: 'server_error' });
  },
};
