/**
 * Fine-tuning jobs at Mistral through the official openai client: the gateway speaks Mistral's
 * fine-tuning API (its create body, its statuses, the events and checkpoints in its job object) to
 * the fake Mistral, and the client sees OpenAI's jobs, events and checkpoints; a job Mistral fails,
 * a cancel, and OpenAI fields Mistral cannot take.
 */
import { toFile } from 'openai';
import type { FineTuningJob, JobCreateParams } from 'openai/resources/fine-tuning/jobs';
import { describe, expect, it } from 'vitest';
import { env, openaiClient } from '../support/gateway-client';
import { pollUntil } from '../support/poll';

const gatewayFiles = () => openaiClient({ provider: null });
const mistral = () => openaiClient({ provider: 'mistral-ai', apiKey: 'sk-mistral-tuning' });
const ended = (job: FineTuningJob) => ['succeeded', 'failed', 'cancelled'].includes(job.status);

async function trainingFile(lines = 10, extra: Record<string, unknown> = {}, text = ''): Promise<string> {
  const body = Array.from({ length: lines }, (_, index) =>
    JSON.stringify({
      messages: [
        { role: 'user', content: `question ${index}${text}` },
        { role: 'assistant', content: `answer ${index}` },
      ],
      ...extra,
    }),
  ).join('\n');
  return (await gatewayFiles().files.create({ file: await toFile(Buffer.from(`${body}\n`), 'train.jsonl'), purpose: 'fine-tune' })).id;
}

async function messagesOf(jobId: string): Promise<string[]> {
  return (await mistral().fineTuning.jobs.listEvents(jobId, { limit: 100 })).data.map((event) => event.message);
}

/** Mistral's id of the job, from the gateway's event saying where it was created. */
async function mistralJobId(jobId: string): Promise<string> {
  const said = (await messagesOf(jobId)).map((message) => /^Created at mistral-ai as (\S+)\.$/.exec(message)?.[1]).find(Boolean);
  if (!said) throw new Error(`job ${jobId} has no event naming its Mistral job`);
  return said;
}

/** What the fake Mistral received for a job (the fake's own route). */
async function received(mistralId: string): Promise<{ create: Record<string, any>; cancels: number }> {
  const response = await fetch(`${env().upstreamUrl}/mistral-ai/v1/fine_tuning/jobs/${mistralId}/fake-received`);
  expect(response.status).toBe(200);
  return (await response.json()) as { create: Record<string, any>; cancels: number };
}

describe('fine-tuning jobs at Mistral', () => {
  it('runs a job through Mistral’s states to succeeded, with Mistral’s events and checkpoints', async () => {
    const training = await trainingFile();
    const validation = await trainingFile(3);
    const created = await mistral().fineTuning.jobs.create({
      model: 'open-mistral-7b',
      training_file: training,
      validation_file: validation,
      suffix: 'orders',
      seed: 7,
      hyperparameters: { n_epochs: 2, batch_size: 'auto', learning_rate_multiplier: 'auto' },
      metadata: { team: 'support' },
    });
    expect(created).toMatchObject({ object: 'fine_tuning.job', status: 'validating_files', model: 'open-mistral-7b', training_file: training });
    const seen = new Set<string>();
    const job = await pollUntil(
      async () => {
        const current = await mistral().fineTuning.jobs.retrieve(created.id);
        seen.add(current.status);
        return current;
      },
      ended,
      30_000,
    );
    expect(job).toMatchObject({ status: 'succeeded', error: null, trained_tokens: 4321, result_files: [], training_file: training, suffix: 'orders' });
    expect(seen.has('running')).toBe(true);
    expect(job.fine_tuned_model).toMatch(/^ft:open-mistral-7b:fake0001:/);
    expect(job.finished_at).toBeGreaterThan(0);

    const messages = await messagesOf(created.id);
    expect(messages).toContain(`Created fine-tuning job ${created.id} for mistral-ai.`);
    expect(messages).toContain('The job succeeded.');
    for (const status of ['QUEUED', 'VALIDATING', 'RUNNING', 'SUCCESS']) expect(messages).toContain(`Mistral job status ${status}.`);
    // Looked at again and again, each of Mistral's events is stored once.
    expect(messages.filter((message) => message === 'Mistral job status RUNNING.')).toHaveLength(1);

    const checkpoints = await mistral().fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data.map((checkpoint) => checkpoint.step_number)).toEqual([20, 10]);
    const mistralId = await mistralJobId(created.id);
    expect(checkpoints.data[0]).toMatchObject({
      object: 'fine_tuning.job.checkpoint',
      fine_tuning_job_id: created.id,
      fine_tuned_model_checkpoint: `${mistralId}:ckpt-step-20`,
      metrics: { step: 20, train_loss: 1 / 20, valid_loss: 1.5 / 20, valid_mean_token_accuracy: 0.9 },
    });

    // Mistral's create body: its file list with weights, its epochs, auto-started, nothing it would refuse.
    const { create } = await received(mistralId);
    expect(create).toEqual({
      model: 'open-mistral-7b',
      training_files: [{ file_id: expect.stringMatching(/^file-/), weight: 1 }],
      validation_files: [expect.stringMatching(/^file-/)],
      suffix: 'orders',
      hyperparameters: { epochs: 2 },
      auto_start: true,
    });
  }, 40_000);

  it('ends failed with Mistral’s reason when Mistral fails the job', async () => {
    const created = await mistral().fineTuning.jobs.create({ model: 'open-mistral-7b', training_file: await trainingFile(2, { fake_outcome: 'failed' }) });
    const job = await pollUntil(() => mistral().fineTuning.jobs.retrieve(created.id), ended, 30_000);
    expect(job.status).toBe('failed');
    expect(job.error).toEqual({ code: 'training_failed', message: 'The fake Mistral could not train on the training file.', param: null });
    expect(job.fine_tuned_model).toBeNull();
    const events = (await mistral().fineTuning.jobs.listEvents(created.id, { limit: 100 })).data;
    expect(events.find((event) => event.message.startsWith('Mistral job status FAILED.'))).toMatchObject({ level: 'error' });
  }, 40_000);

  it('cancels a job Mistral is training: cancelled once Mistral says so', async () => {
    const created = await mistral().fineTuning.jobs.create({ model: 'open-mistral-7b', training_file: await trainingFile(4, {}, ' fake-hold') });
    await pollUntil(
      () => mistral().fineTuning.jobs.retrieve(created.id),
      (job) => job.status === 'running',
      30_000,
    );
    await mistral().fineTuning.jobs.cancel(created.id);
    const job = await pollUntil(() => mistral().fineTuning.jobs.retrieve(created.id), ended, 30_000);
    expect(job.status).toBe('cancelled');
    const messages = await messagesOf(created.id);
    expect(messages).toContain('Mistral job status CANCELLATION_REQUESTED.');
    expect(messages).toContain('Mistral job status CANCELLED.');
    expect((await received(await mistralJobId(created.id))).cancels).toBe(1);
  }, 40_000);

  it('refuses a job asking for what Mistral cannot take, naming the field and saying what to send instead', async () => {
    const training = await trainingFile();
    const refusal = (fields: Partial<JobCreateParams>) =>
      mistral()
        .fineTuning.jobs.create({ model: 'open-mistral-7b', training_file: training, ...fields })
        .catch((error) => error);
    const multiplier = await refusal({ hyperparameters: { learning_rate_multiplier: 2 } });
    expect(multiplier).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'hyperparameters.learning_rate_multiplier' });
    expect(multiplier.message).toContain('hyperparameters.learning_rate');
    expect(await refusal({ method: { type: 'dpo', dpo: { hyperparameters: { beta: 0.1 } } } })).toMatchObject({
      status: 400,
      code: 'unsupported_parameter',
      param: 'method.type',
    });
    expect(await refusal({ integrations: [{ type: 'wandb', wandb: { project: 'orders' } }] })).toMatchObject({
      status: 400,
      code: 'unsupported_parameter',
      param: 'integrations',
    });
  });
});
