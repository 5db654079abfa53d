/**
 * Together AI's fine-tuning API as a fake provider serves it, for the gateway's fine-tuning jobs at
 * `together-ai`: files through `/files/upload` (multipart with `purpose`, `file_name`, `file`), jobs
 * under `/fine-tunes`. Each retrieve of a job moves it one state on — `pending`, `queued`, `running`,
 * then `completed` with an output model name, a token count, an event per step and an intermediate
 * and a final checkpoint — so a test drives a job by the gateway's own follow-ups. A job whose
 * training file's first line holds `"fake_outcome":"error"` ends in `error` when it would start
 * (its reason only in an error event, as Together reports it); one with `"fake_outcome":"hold"` stays
 * `running` until it is cancelled. A cancel makes a job `cancel_requested` for one look, then
 * `cancelled`. An unknown id is a 404 with Together's error body. `GET …/__fake/fine-tunes/<id>`
 * (the fake's own, never called by the gateway) answers what the job was created with and the
 * fields its files were uploaded with, without moving it on.
 * @see https://docs.together.ai/reference/post-fine-tunes
 * @see https://github.com/togethercomputer/openapi/blob/main/openapi.yaml
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { multipartBoundary, parseMultipart } from '../../../lib/wire/multipart';

interface FakeTogetherFile {
  id: string;
  /** The multipart fields it came with, besides the file. */
  fields: Record<string, string>;
  bytes: Buffer;
}

interface FakeTogetherEvent {
  object: 'fine-tune-event';
  created_at: string;
  level: string | null;
  message: string;
  type: string;
  step: number;
  hash: string;
  param_count: number;
  token_count: number;
  total_steps: number;
  wandb_url: string;
  checkpoint_path: string;
  model_path: string;
  training_offset: number;
}

interface FakeTogetherJob {
  id: string;
  status: string;
  /** The create body as it arrived. */
  request: Record<string, unknown>;
  outcome: string | undefined;
  created_at: string;
  updated_at: string;
  model_output_name: string;
  token_count: number;
  events: FakeTogetherEvent[];
  checkpoints: { step: number; created_at: string; path: string; checkpoint_type: string }[];
  /** Looks since the cancel was asked for. */
  cancelLooks: number;
}

export interface FakeTogetherFineTuning {
  /** Answers the request when it is one of Together's fine-tuning API; false to leave it to the caller. */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer, pathname: string): boolean;
}

const totalSteps = 10;

export function fakeTogetherFineTuning(): FakeTogetherFineTuning {
  const files = new Map<string, FakeTogetherFile>();
  const jobs = new Map<string, FakeTogetherJob>();
  // Times only move forward, a second per event at least, so events keep their order once in whole seconds.
  let clock = 0;
  const tick = () => new Date((clock = Math.max(Date.now(), clock + 1000))).toISOString();
  const json = (res: ServerResponse, status: number, value: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };
  const refuse = (res: ServerResponse, status: number, message: string, param: string | null = null): void =>
    json(res, status, { error: { message, type: 'invalid_request_error', param, code: null } });

  const event = (job: FakeTogetherJob, type: string, message: string, level: string | null = 'info', step = 0) => {
    const created_at = tick();
    job.updated_at = created_at;
    job.events.push({
      object: 'fine-tune-event',
      created_at,
      level,
      message,
      type,
      step,
      hash: '',
      param_count: 0,
      token_count: 0,
      total_steps: totalSteps,
      wandb_url: '',
      checkpoint_path: '',
      model_path: '',
      training_offset: 0,
    });
  };

  /** FinetuneResponse: the create's parameters echoed as Together echoes them, and the job's own fields. */
  const present = (job: FakeTogetherJob, withEvents: boolean) => ({
    id: job.id,
    status: job.status,
    created_at: job.created_at,
    updated_at: job.updated_at,
    model: job.request.model,
    training_file: job.request.training_file,
    validation_file: job.request.validation_file,
    suffix: job.request.suffix,
    n_epochs: job.request.n_epochs ?? 1,
    n_checkpoints: job.request.n_checkpoints ?? 1,
    batch_size: job.request.batch_size ?? 'max',
    learning_rate: job.request.learning_rate ?? 0.00001,
    random_seed: job.request.random_seed ?? null,
    training_method: job.request.training_method,
    model_output_name: job.model_output_name,
    token_count: job.status === 'completed' ? job.token_count : 0,
    total_price: 0,
    epochs_completed: job.status === 'completed' ? (job.request.n_epochs ?? 1) : 0,
    events: withEvents ? job.events : [],
  });

  function advance(job: FakeTogetherJob): void {
    if (job.status === 'pending') {
      job.status = 'queued';
      event(job, 'job_pending', 'Job is queued');
    } else if (job.status === 'queued' && job.outcome === 'error') {
      job.status = 'error';
      event(job, 'job_error', 'The fake provider found no assistant turn to train on in the training file.', 'error');
    } else if (job.status === 'queued') {
      job.status = 'running';
      event(job, 'job_start', 'Job started');
      event(job, 'training_start', 'Training started');
    } else if (job.status === 'running' && job.outcome !== 'hold') {
      job.checkpoints.push({ step: totalSteps / 2, created_at: tick(), path: `s3://fake/${job.id}/checkpoint-5`, checkpoint_type: 'Intermediate' });
      event(job, 'checkpoint_save', 'Checkpoint saved at step 5', 'info', totalSteps / 2);
      event(job, 'training_complete', 'Training completed', 'info', totalSteps);
      job.checkpoints.push({ step: totalSteps, created_at: tick(), path: `s3://fake/${job.id}/final`, checkpoint_type: 'Final' });
      event(job, 'job_complete', `Job completed: ${job.model_output_name}`);
      job.status = 'completed';
    } else if (job.status === 'cancel_requested' && job.cancelLooks++ > 0) {
      // Seen once as cancel_requested (Together stops a job in its own time), cancelled at the next look.
      job.status = 'cancelled';
      event(job, 'job_stopped', 'Job cancelled');
    }
  }

  function upload(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    const boundary = multipartBoundary(req.headers['content-type']);
    if (!boundary) return refuse(res, 400, 'Expected multipart/form-data.');
    const parts = parseMultipart(body, boundary);
    const fields = Object.fromEntries(parts.filter((part) => part.name !== 'file').map((part) => [part.name, part.data.toString('utf8')]));
    const file = parts.find((part) => part.name === 'file');
    for (const name of ['purpose', 'file_name']) if (!fields[name]) return refuse(res, 400, `${name} is required.`, name);
    if (!file) return refuse(res, 400, 'file is required.', 'file');
    const stored = { id: `file-${randomUUID()}`, fields, bytes: Buffer.from(file.data) };
    files.set(stored.id, stored);
    const lines = stored.bytes.toString('utf8').split('\n').filter(Boolean).length;
    json(res, 200, {
      id: stored.id,
      object: 'file',
      created_at: Math.floor(Date.now() / 1000),
      filename: fields.file_name,
      bytes: stored.bytes.length,
      purpose: fields.purpose,
      Processed: true,
      FileType: fields.file_type ?? 'jsonl',
      LineCount: lines,
    });
  }

  function create(res: ServerResponse, body: Buffer): void {
    const request = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    if (typeof request.model !== 'string') return refuse(res, 400, 'model is required.', 'model');
    const training = typeof request.training_file === 'string' ? files.get(request.training_file) : undefined;
    if (!training) return refuse(res, 400, `Training file ${String(request.training_file)} not found.`, 'training_file');
    const first = training.bytes.toString('utf8').split('\n')[0] ?? '';
    const created_at = tick();
    const id = `ft-${randomUUID()}`;
    const job: FakeTogetherJob = {
      id,
      status: 'pending',
      request,
      outcome: /"fake_outcome":"(\w+)"/.exec(first)?.[1],
      created_at,
      updated_at: created_at,
      model_output_name: `gw-fake/${request.model}-${typeof request.suffix === 'string' ? request.suffix : 'ft'}-${id.slice(3, 11)}`,
      token_count: training.bytes.length,
      events: [],
      checkpoints: [],
      cancelLooks: 0,
    };
    event(job, 'job_pending', 'Fine tune request created');
    jobs.set(job.id, job);
    json(res, 200, present(job, false));
  }

  return {
    handle(req, res, body, pathname) {
      const method = req.method ?? 'GET';
      if (/\/files\/upload$/.test(pathname) && method === 'POST') return (upload(req, res, body), true);
      if (/\/fine-tunes$/.test(pathname) && method === 'POST') return (create(res, body), true);
      const inspect = /\/__fake\/fine-tunes\/([^/]+)$/.exec(pathname);
      if (inspect && method === 'GET') {
        const job = jobs.get(decodeURIComponent(inspect[1]!));
        if (!job) return (refuse(res, 404, 'No such fake job.'), true);
        const fieldsOf = (fileId: unknown) => (typeof fileId === 'string' ? files.get(fileId)?.fields : undefined);
        json(res, 200, {
          request: job.request,
          uploads: { training: fieldsOf(job.request.training_file), validation: fieldsOf(job.request.validation_file) },
        });
        return true;
      }
      const match = /\/fine-tunes\/([^/]+)(\/cancel|\/events|\/checkpoints)?$/.exec(pathname);
      if (!match) return false;
      const id = decodeURIComponent(match[1]!);
      const job = jobs.get(id);
      if (!job) return (refuse(res, 404, `Fine-tune job ${id} not found.`, 'id'), true);
      if (match[2] === '/events' && method === 'GET') return (json(res, 200, { data: job.events }), true);
      if (match[2] === '/checkpoints' && method === 'GET') return (json(res, 200, { data: [...job.checkpoints].reverse() }), true);
      if (match[2] === '/cancel' && method === 'POST') {
        if (!['pending', 'queued', 'running', 'compressing', 'uploading'].includes(job.status))
          return (refuse(res, 400, `Fine-tune job ${id} is ${job.status} and cannot be cancelled.`), true);
        job.status = 'cancel_requested';
        event(job, 'cancel_requested', 'Cancel requested');
        return (json(res, 200, present(job, false)), true);
      }
      if (match[2] || method !== 'GET') return false;
      advance(job);
      json(res, 200, present(job, true));
      return true;
    },
  };
}
