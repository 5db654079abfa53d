/**
 * Mistral's fine-tuning API as a fake provider serves it (`/fine_tuning/jobs`), on the files the fake
 * OpenAI Files API keeps (Mistral uploads to the same `…/files`). Like Mistral it refuses a create
 * body with fields it does not know, and answers a job with its `events` and `checkpoints` in it. Each
 * GET of a job moves it one state on — QUEUED, VALIDATING, RUNNING (a checkpoint at step 10), then
 * SUCCESS (a fine-tuned model and a checkpoint at step 20) —, with a `status-updated` event per
 * state; a job whose training file's first line holds `"fake_outcome":"failed"` ends FAILED, the
 * reason in its last event's data; one holding `fake-hold` stays RUNNING until it is cancelled. A
 * job created with `auto_start` false stops at VALIDATED until `…/start`. A cancel makes a job
 * CANCELLATION_REQUESTED, then CANCELLED. An unknown job is a 404 with Mistral's error body.
 * `GET …/fine_tuning/jobs/{id}/fake-received` (the fake's own, not Mistral's) answers what the job
 * was created with and how many cancels it got, for a test to check what the gateway sent.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

interface FakeMistralJob {
  id: string;
  status: string;
  model: string;
  auto_start: boolean;
  training_files: string[];
  validation_files: string[];
  suffix: string | null;
  hyperparameters: Record<string, unknown>;
  fine_tuned_model: string | null;
  trained_tokens: number | null;
  created_at: number;
  modified_at: number;
  events: { name: string; data: Record<string, unknown>; created_at: number }[];
  checkpoints: { metrics: Record<string, number>; step_number: number; created_at: number }[];
  /** The fake's own: what the job was created with, and the cancels it got. */
  received: { create: unknown; cancels: number };
  failing: boolean;
  holding: boolean;
}

export interface FakeMistralFineTuning {
  /** Answers the request when it is one of Mistral's fine-tuning API; false to leave it to the caller. */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer, pathname: string): boolean;
  jobs: Map<string, FakeMistralJob>;
}

const createFields = [
  'model',
  'training_files',
  'validation_files',
  'suffix',
  'integrations',
  'auto_start',
  'invalid_sample_skip_percentage',
  'job_type',
  'hyperparameters',
  'repositories',
  'classifier_targets',
];
const hyperparameterFields = ['training_steps', 'learning_rate', 'weight_decay', 'warmup_fraction', 'epochs', 'seq_len', 'fim_ratio'];
const ended = ['SUCCESS', 'FAILED', 'FAILED_VALIDATION', 'CANCELLED'];

export function fakeMistralFineTuning(files: ReadonlyMap<string, { bytes: Buffer }>): FakeMistralFineTuning {
  const jobs = new Map<string, FakeMistralJob>();
  const now = () => Math.floor(Date.now() / 1000);
  const json = (res: ServerResponse, status: number, value: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };
  const error = (res: ServerResponse, status: number, message: string): void =>
    json(res, status, { object: 'error', message, type: 'invalid_request_error', param: null, code: null });

  const present = (job: FakeMistralJob, detailed: boolean) => {
    const { received: _received, failing: _failing, holding: _holding, events, checkpoints, ...fields } = job;
    const answer = { ...fields, object: 'job', job_type: 'completion', integrations: [] };
    // Mistral lists both newest first.
    return detailed ? { ...answer, events: [...events].reverse(), checkpoints: [...checkpoints].reverse() } : answer;
  };

  function moveTo(job: FakeMistralJob, status: string, data: Record<string, unknown> = {}): void {
    job.status = status;
    job.modified_at = now();
    job.events.push({ name: 'status-updated', data: { status, ...data }, created_at: job.modified_at });
  }

  function checkpoint(job: FakeMistralJob, step: number): void {
    job.checkpoints.push({ metrics: { train_loss: 1 / step, valid_loss: 1.5 / step, valid_mean_token_accuracy: 0.9 }, step_number: step, created_at: now() });
  }

  function advance(job: FakeMistralJob): void {
    if (job.status === 'QUEUED') moveTo(job, 'VALIDATING');
    else if (job.status === 'VALIDATING') {
      if (job.failing) moveTo(job, 'FAILED', { error: 'The fake Mistral could not train on the training file.' });
      else if (job.auto_start) {
        moveTo(job, 'RUNNING');
        checkpoint(job, 10);
      } else moveTo(job, 'VALIDATED');
    } else if (job.status === 'RUNNING' && !job.holding) {
      checkpoint(job, 20);
      job.fine_tuned_model = `ft:${job.model}:fake0001:20240531:${job.id.slice(0, 8)}`;
      job.trained_tokens = 4321;
      moveTo(job, 'SUCCESS');
    } else if (job.status === 'CANCELLATION_REQUESTED') moveTo(job, 'CANCELLED');
  }

  function create(res: ServerResponse, body: Buffer): void {
    let request: Record<string, any>;
    try {
      request = JSON.parse(body.toString('utf8'));
    } catch {
      return error(res, 400, 'The body is not JSON.');
    }
    const extra = [
      ...Object.keys(request).filter((name) => !createFields.includes(name)),
      ...Object.keys(request.hyperparameters ?? {})
        .filter((name) => !hyperparameterFields.includes(name))
        .map((name) => `hyperparameters.${name}`),
    ];
    if (extra.length) return error(res, 422, `Extra inputs are not permitted: ${extra.join(', ')}`);
    if (typeof request.model !== 'string' || !request.hyperparameters) return error(res, 422, 'model and hyperparameters are required.');
    const training: string[] = (request.training_files ?? []).map((file: { file_id: string }) => file.file_id);
    const validation: string[] = request.validation_files ?? [];
    const missing = [...training, ...validation].find((id) => !files.has(id));
    if (missing || training.length === 0) return error(res, 404, `No file ${missing ?? '(none given)'}.`);
    const first = files.get(training[0]!)!.bytes.toString('utf8');
    const job: FakeMistralJob = {
      id: randomUUID(),
      status: 'QUEUED',
      model: request.model,
      auto_start: request.auto_start === true,
      training_files: training,
      validation_files: validation,
      suffix: request.suffix ?? null,
      hyperparameters: request.hyperparameters,
      fine_tuned_model: null,
      trained_tokens: null,
      created_at: now(),
      modified_at: now(),
      events: [],
      checkpoints: [],
      received: { create: request, cancels: 0 },
      failing: (first.split('\n')[0] ?? '').includes('fake_outcome":"failed'),
      holding: first.includes('fake-hold'),
    };
    moveTo(job, 'QUEUED');
    jobs.set(job.id, job);
    json(res, 200, present(job, false));
  }

  return {
    jobs,
    handle(req, res, body, pathname) {
      const method = req.method ?? 'GET';
      if (/\/fine_tuning\/jobs$/.test(pathname) && method === 'POST') return (create(res, body), true);
      const match = /\/fine_tuning\/jobs\/([^/]+)(\/cancel|\/start|\/fake-received)?$/.exec(pathname);
      if (!match) return false;
      const job = jobs.get(decodeURIComponent(match[1]!));
      if (!job) return (error(res, 404, `Fine-tuning job ${decodeURIComponent(match[1]!)} not found.`), true);
      const action = match[2];
      if (action === '/fake-received' && method === 'GET') return (json(res, 200, job.received), true);
      if (action === '/cancel' && method === 'POST') {
        job.received.cancels++;
        if (!ended.includes(job.status) && job.status !== 'CANCELLATION_REQUESTED') moveTo(job, 'CANCELLATION_REQUESTED');
      } else if (action === '/start' && method === 'POST') {
        if (job.status !== 'VALIDATED') return (error(res, 400, `Job ${job.id} is ${job.status}; only a VALIDATED job can be started.`), true);
        moveTo(job, 'RUNNING');
        checkpoint(job, 10);
      } else if (action === undefined && method === 'GET') advance(job);
      else return false;
      json(res, 200, present(job, true));
      return true;
    },
  };
}
