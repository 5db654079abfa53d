/**
 * Fine-tuning jobs at Together AI through the official openai client: the gateway speaks Together's
 * own fine-tuning API (fakes/together-fine-tuning.ts) — its file upload, its create body, its states,
 * events and checkpoints in OpenAI's words — and refuses what Together cannot run rather than run
 * something else.
 */
import { toFile } from 'openai';
import type { FineTuningJob, JobCreateParams } from 'openai/resources/fine-tuning/jobs';
import { describe, expect, it } from 'vitest';
import { env, openaiClient } from '../support/gateway-client';
import { pollUntil } from '../support/poll';

const gatewayFiles = () => openaiClient({ provider: null });
const together = () => openaiClient({ provider: 'together-ai', apiKey: 'together-key' });
const ended = (job: FineTuningJob) => ['succeeded', 'failed', 'cancelled'].includes(job.status);
const model = 'meta-llama/Meta-Llama-3.1-8B-Instruct-Reference';

/** A gateway file of chat lines; `outcome` asks the fake for an ending (`error`, `hold`) on the first line. */
async function trainingFile(lines = 6, outcome?: string): Promise<string> {
  const text = Array.from({ length: lines }, (_, index) =>
    JSON.stringify({
      messages: [
        { role: 'user', content: `Where is order ${index}?` },
        { role: 'assistant', content: `Order ${index} ships Tuesday.` },
      ],
      ...(index === 0 && outcome ? { fake_outcome: outcome } : {}),
    }),
  ).join('\n');
  return (await gatewayFiles().files.create({ file: await toFile(Buffer.from(`${text}\n`), 'train.jsonl'), purpose: 'fine-tune' })).id;
}

const messagesOf = async (id: string) => (await together().fineTuning.jobs.listEvents(id, { limit: 100 })).data;

/** Together's id of the job, from the gateway's event that says where it was created. */
async function providerJobId(id: string): Promise<string> {
  const find = async () => (await messagesOf(id)).map((event) => /^Created at together-ai as (ft-\S+)\.$/.exec(event.message)?.[1]).find(Boolean);
  const found = await pollUntil(find, (value) => value !== undefined, 15_000);
  if (!found) throw new Error(`job ${id} was not created at Together`);
  return found;
}

/** What the fake was asked to create, and the fields of the uploads (the fake's own view: it does not move the job on). */
async function received(providerId: string): Promise<{ request: Record<string, unknown>; uploads: Record<string, Record<string, string> | undefined> }> {
  const response = await fetch(`${env().upstreamUrl}/together-ai/v1/__fake/fine-tunes/${providerId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as any;
}

describe('fine-tuning jobs at Together AI', () => {
  it('runs a job at Together with its own create body and mirrors its states, events and checkpoints', async () => {
    const training = await trainingFile();
    const validation = await trainingFile(2);
    const created = await together().fineTuning.jobs.create({
      model,
      training_file: training,
      validation_file: validation,
      suffix: 'orders',
      seed: 42,
      hyperparameters: { n_epochs: 2, batch_size: 8, learning_rate_multiplier: 'auto' },
      metadata: { team: 'support' },
    });
    expect(created).toMatchObject({ object: 'fine_tuning.job', status: 'validating_files', model, training_file: training });
    expect(created.id).toMatch(/^gwft_/);

    const seen = new Set<string>();
    const job = await pollUntil(
      async () => {
        const current = await together().fineTuning.jobs.retrieve(created.id);
        seen.add(current.status);
        return current;
      },
      ended,
      30_000,
    );
    expect(job.status).toBe('succeeded');
    expect(seen.has('queued') && seen.has('running')).toBe(true);
    expect(job.fine_tuned_model).toMatch(new RegExp(`^gw-fake/${model}-orders-`));
    expect(job.trained_tokens).toBeGreaterThan(0);
    expect(job.finished_at).toBeGreaterThan(0);
    // The weights stay at Together: nothing is copied home.
    expect(job.result_files).toEqual([]);
    expect(job.hyperparameters).toMatchObject({ n_epochs: 2, batch_size: 8 });
    expect(job).toMatchObject({ training_file: training, validation_file: validation, seed: 42, metadata: { team: 'support' } });

    const providerId = await providerJobId(created.id);
    const { request, uploads } = await received(providerId);
    expect(request).toEqual({
      model,
      training_file: expect.stringMatching(/^file-/),
      validation_file: expect.stringMatching(/^file-/),
      suffix: 'orders',
      random_seed: 42,
      n_epochs: 2,
      batch_size: 8,
      training_method: { method: 'sft', train_on_inputs: 'auto' },
    });
    expect(uploads.training).toEqual({ purpose: 'fine-tune', file_name: `${training}.jsonl`, file_type: 'jsonl' });
    expect(uploads.validation).toMatchObject({ purpose: 'fine-tune', file_name: `${validation}.jsonl` });

    const events = await messagesOf(created.id);
    const messages = events.map((event) => event.message);
    expect(messages).toContain(`Created fine-tuning job ${created.id} for together-ai.`);
    expect(messages).toContain('The job succeeded.');
    expect(messages).toContain(`Job completed: ${job.fine_tuned_model}`);
    // Looked at several times, each of Together's events is one event of the job.
    expect(messages.filter((message) => message === 'Training started')).toHaveLength(1);
    const times = events.map((event) => event.created_at);
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const checkpoints = await together().fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data.map((checkpoint) => checkpoint.step_number)).toEqual([10, 5]);
    expect(checkpoints.data.map((checkpoint) => checkpoint.fine_tuned_model_checkpoint)).toEqual([providerId, `${providerId}:5`]);
    expect(checkpoints.data[0]).toMatchObject({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: created.id });
  }, 45_000);

  it('ends failed with Together’s reason, which it gives only in its events', async () => {
    const created = await together().fineTuning.jobs.create({ model, training_file: await trainingFile(3, 'error') });
    const job = await pollUntil(() => together().fineTuning.jobs.retrieve(created.id), ended, 30_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ code: 'provider_error', message: 'The fake provider found no assistant turn to train on in the training file.' });
    const errors = (await messagesOf(created.id)).filter((event) => event.level === 'error').map((event) => event.message);
    expect(errors).toContain('The fake provider found no assistant turn to train on in the training file.');
  }, 45_000);

  it('cancels a running job at Together: still running while Together has a cancel requested, then cancelled', async () => {
    const created = await together().fineTuning.jobs.create({ model, training_file: await trainingFile(3, 'hold') });
    const running = await pollUntil(
      () => together().fineTuning.jobs.retrieve(created.id),
      (job) => job.status === 'running',
      30_000,
    );
    expect(running.status).toBe('running');
    await together().fineTuning.jobs.cancel(created.id);
    const seen: string[] = [];
    const job = await pollUntil(
      async () => {
        const current = await together().fineTuning.jobs.retrieve(created.id);
        seen.push(current.status);
        return current;
      },
      ended,
      30_000,
    );
    expect(job.status).toBe('cancelled');
    expect(new Set(seen)).toEqual(new Set(['running', 'cancelled']));
    const messages = (await messagesOf(created.id)).map((event) => event.message);
    expect(messages).toEqual(expect.arrayContaining(['Cancel requested', 'Job cancelled']));
    expect(
      await together()
        .fineTuning.jobs.cancel(created.id)
        .catch((error) => error.status),
    ).toBe(409);
  }, 45_000);

  it('sends DPO as Together’s training method, and leaves out a wandb integration it cannot key', async () => {
    const created = await together().fineTuning.jobs.create({
      model,
      training_file: await trainingFile(),
      method: { type: 'dpo', dpo: { hyperparameters: { beta: 0.2, n_epochs: 1 } } },
      integrations: [{ type: 'wandb', wandb: { project: 'orders' } }],
    });
    const { request } = await received(await providerJobId(created.id));
    expect(request).toEqual({ model, training_file: expect.stringMatching(/^file-/), n_epochs: 1, training_method: { method: 'dpo', dpo_beta: 0.2 } });
    const warnings = (await messagesOf(created.id)).filter((event) => event.level === 'warn').map((event) => event.message);
    expect(warnings).toEqual([expect.stringMatching(/^The wandb integration is not passed to Together AI/)]);
    expect((await pollUntil(() => together().fineTuning.jobs.retrieve(created.id), ended, 30_000)).status).toBe('succeeded');
  }, 45_000);

  it('refuses a job Together cannot run as asked, naming the field', async () => {
    const refusals: [Partial<JobCreateParams>, string][] = [
      [{ hyperparameters: { learning_rate_multiplier: 2 } }, 'hyperparameters.learning_rate_multiplier'],
      [
        { method: { type: 'reinforcement', reinforcement: { grader: { type: 'string_check', name: 'g', input: 'x', reference: 'y', operation: 'eq' } } } },
        'method.type',
      ],
    ];
    const training = await trainingFile(2);
    for (const [fields, param] of refusals) {
      const refused = await together()
        .fineTuning.jobs.create({ model, training_file: training, ...fields })
        .catch((error) => error);
      expect(refused).toMatchObject({ status: 400, code: 'unsupported_parameter', param });
      expect(refused.message).toMatch(/Together AI cannot run this job: /);
    }
  });
});
