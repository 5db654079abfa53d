/**
 * OpenAI's Batch API as a fake provider serves it (files with purpose `batch`, `/batches`), for the
 * gateway's provider-run batches. Each retrieve moves a batch one state on — `validating`,
 * `in_progress`, then `completed` with an output file answering each line (`echo: <last message>`)
 * and an error file for lines whose model is `error-<status>` — so a test drives a batch through its
 * states by the gateway's own follow-ups. A batch whose first line carries `"fake_outcome":"failed"`
 * or `"expired"` ends so instead, and one with `"unanswered"` answers every retrieve with a 500; a
 * cancel makes a batch `cancelling`, then `cancelled`. Mistral's batch jobs (`/batch/jobs`) run on
 * the same files: `QUEUED`, `RUNNING`, then `SUCCESS`, answering lines that ask for a `long` answer
 * with Mistral's own finish reason `model_length`; a cancel is `CANCELLATION_REQUESTED`, then `CANCELLED`.
 * OpenAI's fine-tuning jobs (`/fine_tuning/jobs`) too: each look moves a job from `validating_files`
 * through `queued` and `running` to `succeeded` (a fine-tuned model, trained tokens, a CSV result
 * file and an event per state), or `failed` when its training file holds `fake-outcome-failed`; one
 * holding `fake-hold` stays `running` until it is cancelled. Under `/azure-openai/` it is Azure
 * OpenAI's: every call needs `api-version`, and a batch names its operation without `/v1`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { multipartBoundary, parseMultipart } from '../../../lib/wire/multipart';

interface FakeFile {
  id: string;
  bytes: Buffer;
  purpose: string;
  filename: string;
}

interface FakeBatch {
  id: string;
  input_file_id: string;
  endpoint: string;
  status: string;
  metadata: Record<string, string>;
  created_at: number;
  output_file_id: string | null;
  error_file_id: string | null;
  request_counts: { total: number; completed: number; failed: number };
  errors: unknown;
}

export interface FakeBatchApi {
  /** Answers the request when it is one of the Batch API's; false to leave it to the caller. */
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer, pathname: string): boolean;
  files: Map<string, FakeFile>;
  batches: Map<string, FakeBatch>;
}

/**
 * What Azure OpenAI's resource APIs refuse that OpenAI's take: a call without `api-version`, and a
 * batch that names the operation OpenAI's way (`/v1/chat/completions`) in its endpoint or lines.
 */
function azureRefusal(req: IncomingMessage, body: Buffer, pathname: string, files: Map<string, FakeFile>): string | undefined {
  if (!new URL(req.url ?? '/', 'http://fake').searchParams.get('api-version')) return 'fake azure: api-version is required.';
  if (req.method !== 'POST' || !/\/batches$/.test(pathname)) return undefined;
  const { endpoint, input_file_id } = JSON.parse(body.toString('utf8')) as { endpoint: string; input_file_id: string };
  if (endpoint.startsWith('/v1/')) return `fake azure: endpoint ${endpoint} is not one of /chat/completions, /embeddings.`;
  const lines = files.get(input_file_id)?.bytes.toString('utf8').split('\n').filter(Boolean) ?? [];
  const stray = lines.find((line) => (JSON.parse(line) as { url: string }).url !== endpoint);
  return stray ? `fake azure: every line's url must be the batch's endpoint ${endpoint}.` : undefined;
}

export function fakeBatchApi(): FakeBatchApi {
  const files = new Map<string, FakeFile>();
  const batches = new Map<string, FakeBatch>();
  let next = 0;
  const id = (prefix: string) => `${prefix}${String(++next).padStart(6, '0')}`;
  const json = (res: ServerResponse, status: number, value: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  const notFound = (res: ServerResponse, what: string) => json(res, 404, { error: { message: `No such ${what}.`, type: 'invalid_request_error', code: null } });

  const present = (file: FakeFile) => ({
    id: file.id,
    object: 'file',
    bytes: file.bytes.length,
    created_at: 1,
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
  });
  const presentBatch = (batch: FakeBatch) => ({ object: 'batch', completion_window: '24h', ...batch });

  function finish(batch: FakeBatch): void {
    const outcome = batch.metadata.fake_outcome;
    if (outcome === 'failed' || outcome === 'expired') {
      batch.status = outcome;
      if (outcome === 'failed')
        batch.errors = { object: 'list', data: [{ code: 'invalid_request', message: 'The fake provider refused the file.', param: null, line: 1 }] };
      return;
    }
    const output: string[] = [];
    const errors: string[] = [];
    for (const line of files.get(batch.input_file_id)!.bytes.toString('utf8').split('\n').filter(Boolean)) {
      const request = JSON.parse(line) as { custom_id: string; body: { model: string; messages?: { content: string }[] } };
      const model = request.body.model;
      if (model.startsWith('error-')) {
        const status = Number(model.slice(6));
        const body = { error: { message: `The fake provider answered ${status}.`, type: 'server_error', code: null } };
        errors.push(
          JSON.stringify({ id: id('batch_req_'), custom_id: request.custom_id, response: { status_code: status, request_id: id('req_'), body }, error: null }),
        );
        continue;
      }
      const content = `echo: ${request.body.messages?.at(-1)?.content ?? ''}`;
      const body = {
        id: id('chatcmpl-'),
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      };
      output.push(
        JSON.stringify({ id: id('batch_req_'), custom_id: request.custom_id, response: { status_code: 200, request_id: id('req_'), body }, error: null }),
      );
    }
    const store = (lines: string[], name: string) => {
      if (lines.length === 0) return null;
      const file = { id: id('file-'), bytes: Buffer.from(`${lines.join('\n')}\n`), purpose: 'batch_output', filename: name };
      files.set(file.id, file);
      return file.id;
    };
    batch.output_file_id = store(output, 'output.jsonl');
    batch.error_file_id = store(errors, 'errors.jsonl');
    batch.request_counts = { total: output.length + errors.length, completed: output.length, failed: errors.length };
    batch.status = 'completed';
  }

  function advance(batch: FakeBatch): void {
    if (batch.status === 'validating') batch.status = 'in_progress';
    else if (batch.status === 'in_progress') finish(batch);
    else if (batch.status === 'cancelling') batch.status = 'cancelled';
  }

  const jobs = new Map<string, { id: string; status: string; input: string; model: string; output_file: string | null; total: number; succeeded: number }>();

  function mistralJobs(req: IncomingMessage, res: ServerResponse, body: Buffer, pathname: string): boolean {
    const method = req.method ?? 'GET';
    if (/\/batch\/jobs$/.test(pathname) && method === 'POST') {
      const request = JSON.parse(body.toString('utf8')) as { input_files: string[]; model: string };
      const input = files.get(request.input_files[0] ?? '');
      if (!input) return (notFound(res, 'file'), true);
      const job = {
        id: `8f2e${String(++next).padStart(8, '0')}`,
        status: 'QUEUED',
        input: input.id,
        model: request.model,
        output_file: null,
        total: 0,
        succeeded: 0,
      };
      jobs.set(job.id, job);
      json(res, 200, presentJob(job));
      return true;
    }
    const match = /\/batch\/jobs\/([^/]+)(\/cancel)?$/.exec(pathname);
    if (!match) return false;
    const job = jobs.get(decodeURIComponent(match[1]!));
    if (!job) return (notFound(res, 'job'), true);
    if (match[2] && method === 'POST') {
      if (['QUEUED', 'RUNNING'].includes(job.status)) job.status = 'CANCELLATION_REQUESTED';
    } else if (method === 'GET') {
      if (job.status === 'QUEUED') job.status = 'RUNNING';
      else if (job.status === 'CANCELLATION_REQUESTED') job.status = 'CANCELLED';
      else if (job.status === 'RUNNING') {
        const output = files
          .get(job.input)!
          .bytes.toString('utf8')
          .split('\n')
          .filter(Boolean)
          .map((text) => {
            const { custom_id, body: request } = JSON.parse(text) as { custom_id: string; body: { messages: { content: string }[] } };
            const last = request.messages.at(-1)?.content ?? '';
            const finish = last.includes('long') ? 'model_length' : 'stop';
            const answer = {
              id: id('cmpl-'),
              object: 'chat.completion',
              model: job.model,
              choices: [{ index: 0, message: { role: 'assistant', content: `echo: ${last}` }, finish_reason: finish }],
            };
            return JSON.stringify({ id: id('batch-'), custom_id, response: { status_code: 200, body: answer }, error: null });
          });
        const file = { id: id('file-'), bytes: Buffer.from(`${output.join('\n')}\n`), purpose: 'batch_result', filename: 'output.jsonl' };
        files.set(file.id, file);
        Object.assign(job, { status: 'SUCCESS', output_file: file.id, total: output.length, succeeded: output.length });
      }
    } else return false;
    json(res, 200, presentJob(job));
    return true;
  }

  interface FakeTuningJob {
    id: string;
    object: 'fine_tuning.job';
    model: string;
    status: string;
    training_file: string;
    validation_file: string | null;
    created_at: number;
    fine_tuned_model: string | null;
    finished_at: number | null;
    trained_tokens: number | null;
    result_files: string[];
    hyperparameters: Record<string, unknown>;
    error: unknown;
    suffix: string | null;
    events: { id: string; object: string; created_at: number; level: string; message: string; type: string }[];
  }
  const tuningJobs = new Map<string, FakeTuningJob>();

  function fineTuningJobs(req: IncomingMessage, res: ServerResponse, body: Buffer, pathname: string): boolean {
    const method = req.method ?? 'GET';
    const event = (job: FakeTuningJob, message: string) =>
      job.events.unshift({
        id: id('ftevent-'),
        object: 'fine_tuning.job.event',
        created_at: 1_700_000_000 + job.events.length,
        level: 'info',
        message,
        type: 'message',
      });
    if (/\/fine_tuning\/jobs$/.test(pathname) && method === 'POST') {
      const request = JSON.parse(body.toString('utf8')) as {
        model: string;
        training_file: string;
        validation_file?: string;
        suffix?: string;
        hyperparameters?: Record<string, unknown>;
      };
      if (!files.has(request.training_file)) return (notFound(res, 'file'), true);
      const job: FakeTuningJob = {
        id: id('ftjob-'),
        object: 'fine_tuning.job',
        model: request.model,
        status: 'validating_files',
        training_file: request.training_file,
        validation_file: request.validation_file ?? null,
        created_at: 1_700_000_000,
        fine_tuned_model: null,
        finished_at: null,
        trained_tokens: null,
        result_files: [],
        hyperparameters: { n_epochs: 3, ...request.hyperparameters },
        error: null,
        suffix: request.suffix ?? null,
        events: [],
      };
      event(job, 'Validating training file');
      tuningJobs.set(job.id, job);
      const { events: _events, ...answer } = job;
      json(res, 200, answer);
      return true;
    }
    const match = /\/fine_tuning\/jobs\/([^/]+)(\/cancel|\/events|\/checkpoints)?$/.exec(pathname);
    if (!match) return false;
    const job = tuningJobs.get(decodeURIComponent(match[1]!));
    if (!job) return (notFound(res, 'fine-tuning job'), true);
    if (match[2] === '/events' && method === 'GET') return (json(res, 200, { object: 'list', data: job.events, has_more: false }), true);
    if (match[2] === '/checkpoints' && method === 'GET') {
      // A checkpoint per step once the job has trained: steps 10 and 20, the latest first.
      const data =
        job.status === 'succeeded'
          ? [20, 10].map((step) => ({
              id: `ftckpt_${job.id.slice(6)}_${step}`,
              object: 'fine_tuning.job.checkpoint',
              created_at: 1_700_000_100 + step,
              fine_tuned_model_checkpoint: `${job.fine_tuned_model}:ckpt-step-${step}`,
              step_number: step,
              metrics: { step, train_loss: 1 / step, train_mean_token_accuracy: 0.9 },
              fine_tuning_job_id: job.id,
            }))
          : [];
      return (json(res, 200, { object: 'list', data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }), true);
    }
    if (match[2] === '/cancel' && method === 'POST') {
      if (!['succeeded', 'failed', 'cancelled'].includes(job.status)) {
        job.status = 'cancelled';
        event(job, 'Job cancelled');
      }
    } else if (method === 'GET') {
      if (job.status === 'validating_files') {
        const failing = files.get(job.training_file)!.bytes.toString('utf8').includes('fake-outcome-failed');
        if (failing) {
          Object.assign(job, {
            status: 'failed',
            finished_at: 1_700_000_100,
            error: { code: 'invalid_training_file', message: 'The fake provider refused the training file.', param: 'training_file' },
          });
          event(job, 'Training file refused');
        } else {
          job.status = 'queued';
          event(job, 'Job queued');
        }
      } else if (job.status === 'queued') {
        job.status = 'running';
        event(job, 'Fine-tuning started');
      } else if (job.status === 'running' && !files.get(job.training_file)!.bytes.toString('utf8').includes('fake-hold')) {
        const result = { id: id('file-'), bytes: Buffer.from('step,train_loss\n1,0.91\n2,0.42\n'), purpose: 'fine-tune-results', filename: 'step_metrics.csv' };
        files.set(result.id, result);
        Object.assign(job, {
          status: 'succeeded',
          finished_at: 1_700_000_200,
          trained_tokens: 1234,
          fine_tuned_model: `ft:${job.model}:gw-fake:${job.suffix ?? 'model'}:${job.id}`,
          result_files: [result.id],
        });
        event(job, 'The job has successfully completed');
      }
    } else return false;
    const { events: _events, ...answer } = job;
    json(res, 200, answer);
    return true;
  }

  const presentJob = (job: { id: string; status: string; model: string; output_file: string | null; total: number; succeeded: number }) => ({
    id: job.id,
    object: 'batch',
    model: job.model,
    status: job.status,
    output_file: job.output_file,
    error_file: null,
    errors: [],
    total_requests: job.total,
    succeeded_requests: job.succeeded,
    failed_requests: 0,
  });

  return {
    files,
    batches,
    handle(req, res, body, pathname) {
      const method = req.method ?? 'GET';
      if (pathname.startsWith('/azure-openai/')) {
        const refusal = azureRefusal(req, body, pathname, files);
        if (refusal) return (json(res, 400, { error: { message: refusal, type: 'invalid_request_error', code: 'invalid_request' } }), true);
      }
      let match = /\/files$/.exec(pathname);
      if (match && method === 'POST') {
        const boundary = multipartBoundary(req.headers['content-type']);
        if (!boundary) return (json(res, 400, { error: { message: 'Expected multipart/form-data.' } }), true);
        const parts = parseMultipart(body, boundary);
        const file = parts.find((part) => part.name === 'file');
        const purpose = parts.find((part) => part.name === 'purpose')?.data.toString('utf8') ?? '';
        if (!file) return (json(res, 400, { error: { message: 'file is required.' } }), true);
        const stored = { id: id('file-'), bytes: file.data, purpose, filename: file.filename ?? 'upload' };
        files.set(stored.id, stored);
        json(res, 200, present(stored));
        return true;
      }
      match = /\/files\/([^/]+)\/content$/.exec(pathname);
      if (match && method === 'GET') {
        const file = files.get(decodeURIComponent(match[1]!));
        if (!file) return (notFound(res, 'file'), true);
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(file.bytes);
        return true;
      }
      match = /\/batches$/.exec(pathname);
      if (match && method === 'POST') {
        const request = JSON.parse(body.toString('utf8')) as { input_file_id: string; endpoint: string; metadata?: Record<string, string> };
        if (!files.has(request.input_file_id)) return (notFound(res, 'file'), true);
        const batch: FakeBatch = {
          id: id('batch_'),
          input_file_id: request.input_file_id,
          endpoint: request.endpoint,
          status: 'validating',
          metadata: request.metadata ?? {},
          created_at: 1,
          output_file_id: null,
          error_file_id: null,
          request_counts: { total: 0, completed: 0, failed: 0 },
          errors: null,
        };
        // The input's first line may ask for an ending (its body's metadata is the line's, not the batch's).
        const first = files.get(request.input_file_id)!.bytes.toString('utf8').split('\n')[0] ?? '';
        const outcome = /"fake_outcome":"(\w+)"/.exec(first)?.[1];
        if (outcome) batch.metadata.fake_outcome = outcome;
        batches.set(batch.id, batch);
        json(res, 200, presentBatch(batch));
        return true;
      }
      if (mistralJobs(req, res, body, pathname)) return true;
      if (fineTuningJobs(req, res, body, pathname)) return true;
      match = /\/batches\/([^/]+)(\/cancel)?$/.exec(pathname);
      if (match) {
        const batch = batches.get(decodeURIComponent(match[1]!));
        if (!batch) return (notFound(res, 'batch'), true);
        if (match[2] && method === 'POST') {
          if (['validating', 'in_progress'].includes(batch.status)) batch.status = 'cancelling';
        } else if (method === 'GET') {
          if (batch.metadata.fake_outcome === 'unanswered')
            return (json(res, 500, { error: { message: 'The fake provider is down.', type: 'server_error', code: null } }), true);
          advance(batch);
        } else return false;
        json(res, 200, presentBatch(batch));
        return true;
      }
      return false;
    },
  };
}
