/**
 * Fine-tuning jobs through the official openai client: a job created from gateway files runs at the
 * fake provider's fine-tuning API, followed by the gateway's worker through its states, its events
 * merged with the gateway's own, its result files copied home as gateway files; cancel, a provider
 * failure, refusals, another workspace, and pass-through of the provider's own ids.
 */
import OpenAI, { NotFoundError, toFile } from 'openai';
import type { FineTuningJob } from 'openai/resources/fine-tuning/jobs';
import { describe, expect, it } from 'vitest';
import { startFakeUpstream } from '../support/fake-upstream';
import { env, openaiClient } from '../support/gateway-client';
import { connectToGatewayStore } from '../support/gateway-store';
import { pollUntil } from '../support/poll';

const store = connectToGatewayStore();
const gatewayFiles = () => openaiClient({ provider: null });
const openai = () => openaiClient({ provider: 'openai', apiKey: 'sk-tuning' });
const ended = (job: FineTuningJob) => ['succeeded', 'failed', 'cancelled'].includes(job.status);

async function trainingFile(lines = 10, extra = ''): Promise<string> {
  const text = Array.from({ length: lines }, (_, index) =>
    JSON.stringify({
      messages: [
        { role: 'user', content: `question ${index}${extra}` },
        { role: 'assistant', content: `answer ${index}` },
      ],
    }),
  ).join('\n');
  return (await gatewayFiles().files.create({ file: await toFile(Buffer.from(`${text}\n`), 'train.jsonl'), purpose: 'fine-tune' })).id;
}

describe('fine-tuning jobs', () => {
  it('runs a job at the provider, follows it to succeeded and copies its result files home', async () => {
    const training = await trainingFile();
    const validation = await trainingFile(3);
    const created = await openai().fineTuning.jobs.create({
      model: 'gpt-4o-mini-2024-07-18',
      training_file: training,
      validation_file: validation,
      suffix: 'support',
    });
    expect(created).toMatchObject({
      object: 'fine_tuning.job',
      status: 'validating_files',
      model: 'gpt-4o-mini-2024-07-18',
      training_file: training,
      validation_file: validation,
    });
    expect(created.id).toMatch(/^gwft_/);
    const seen = new Set<string>();
    const job = await pollUntil(
      async () => {
        const current = await openai().fineTuning.jobs.retrieve(created.id);
        seen.add(current.status);
        return current;
      },
      ended,
      30_000,
    );
    expect(job.status).toBe('succeeded');
    expect(seen.has('running') || seen.has('queued')).toBe(true);
    expect(job.fine_tuned_model).toMatch(/^ft:gpt-4o-mini-2024-07-18:gw-fake:support:ftjob-/);
    expect(job.trained_tokens).toBe(1234);
    expect(job.finished_at).toBeGreaterThan(0);
    expect(job.training_file).toBe(training);
    expect(job.result_files).toHaveLength(1);
    expect(job.result_files[0]).toMatch(/^gwf_/);
    const result = await gatewayFiles().files.retrieve(job.result_files[0]!);
    expect(result.purpose).toBe('fine-tune-results');
    expect(await (await gatewayFiles().files.content(job.result_files[0]!)).text()).toBe('step,train_loss\n1,0.91\n2,0.42\n');

    const events = await openai().fineTuning.jobs.listEvents(created.id, { limit: 50 });
    const messages = events.data.map((event) => event.message);
    expect(messages).toContain(`Created fine-tuning job ${created.id} for openai.`);
    expect(messages).toContain('The job has successfully completed');
    expect(messages.some((message) => /^Created at openai as ftjob-/.test(message))).toBe(true);
    const times = events.data.map((event) => event.created_at);
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const checkpoints = await openai().fineTuning.jobs.checkpoints.list(created.id);
    expect(checkpoints.data.map((checkpoint) => checkpoint.step_number)).toEqual([20, 10]);
    expect(checkpoints.data[0]).toMatchObject({ object: 'fine_tuning.job.checkpoint', fine_tuning_job_id: created.id, metrics: { step: 20 } });
    expect(checkpoints.data[0]?.fine_tuned_model_checkpoint).toBe(`${job.fine_tuned_model}:ckpt-step-20`);

    const listed = await gatewayFiles().fineTuning.jobs.list({ limit: 100 });
    expect(listed.data.map((candidate) => candidate.id)).toContain(created.id);
  });

  it('ends failed, with the provider’s error, when the provider refuses the training file', async () => {
    const training = await trainingFile(2, ' fake-outcome-failed');
    const created = await openai().fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: training });
    const job = await pollUntil(() => openai().fineTuning.jobs.retrieve(created.id), ended, 30_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatchObject({ code: 'invalid_training_file', param: 'training_file' });
  });

  it('cancels: the job ends cancelled, and an ended job cannot be cancelled', async () => {
    // A job that trains until it is cancelled, however often it is looked at.
    const created = await openai().fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: await trainingFile(10, ' fake-hold') });
    await openai().fineTuning.jobs.cancel(created.id);
    const job = await pollUntil(() => openai().fineTuning.jobs.retrieve(created.id), ended, 15_000);
    expect(job.status).toBe('cancelled');
    expect(
      await openai()
        .fineTuning.jobs.cancel(created.id)
        .catch((error) => error.status),
    ).toBe(409);
  });

  it('refuses a provider without a fine-tuning API the gateway drives, and a file of another purpose', async () => {
    const training = await trainingFile();
    const refused = await openaiClient({ provider: 'groq' })
      .fineTuning.jobs.create({ model: 'llama', training_file: training })
      .catch((error) => error);
    expect(refused).toMatchObject({ status: 400, code: 'provider_not_supported' });
    const notes = await gatewayFiles().files.create({ file: await toFile(Buffer.from('x'), 'notes.txt'), purpose: 'user_data' });
    const wrongPurpose = await openai()
      .fineTuning.jobs.create({ model: 'gpt-4o-mini', training_file: notes.id })
      .catch((error) => error);
    expect(wrongPurpose).toMatchObject({ status: 400, code: 'invalid_file', param: 'training_file' });
  });

  it('runs a job at Azure OpenAI, its calls under the resource with the api-version', async () => {
    // The fake answers Azure's paths only with an api-version, so a job that succeeds was addressed Azure's way.
    const azure = openaiClient({
      provider: 'azure-openai',
      apiKey: 'azure-key',
      headers: { 'x-gateway-cloudC-resource-name': 'orders-east', 'x-gateway-cloudC-api-version': '2024-10-21' },
    });
    const created = await azure.fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: await trainingFile(), suffix: 'azure' });
    const job = await pollUntil(() => azure.fineTuning.jobs.retrieve(created.id), ended, 30_000);
    expect(job).toMatchObject({ status: 'succeeded', error: null });
    expect(job.fine_tuned_model).toMatch(/^ft:gpt-4o-mini-2024-07-18:gw-fake:azure:/);
    expect(job.result_files).toHaveLength(1);
    const messages = (await azure.fineTuning.jobs.listEvents(created.id, { limit: 50 })).data.map((event) => event.message);
    expect(messages).toContain(`Created fine-tuning job ${created.id} for azure-openai.`);
  });

  it('is invisible to another workspace', async () => {
    const created = await openai().fineTuning.jobs.create({ model: 'gpt-4o-mini-2024-07-18', training_file: await trainingFile() });
    const other = new OpenAI({ baseURL: env().gatewayUrl, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': store.otherWorkspaceKey } });
    await expect(other.fineTuning.jobs.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.fineTuning.jobs.cancel(created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.fineTuning.jobs.listEvents(created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await other.fineTuning.jobs.list()).data.map((job) => job.id)).not.toContain(created.id);
    await pollUntil(() => openai().fineTuning.jobs.retrieve(created.id), ended, 30_000);
  });
});

describe('a provider’s fine-tuning jobs', () => {
  it('passes a request that selects a provider and names the provider’s own ids through', async () => {
    const upstream = await startFakeUpstream();
    try {
      const answer = { id: 'ftjob-abc', object: 'fine_tuning.job', status: 'running', model: 'gpt-4o-mini', created_at: 1 };
      upstream.script('/own/v1/fine_tuning/jobs/ftjob-abc', [{ status: 200, json: answer }]);
      const provider = openaiClient({ headers: { 'x-gateway-custom-host': `${upstream.url}/own/v1` } });
      expect(await provider.fineTuning.jobs.retrieve('ftjob-abc')).toEqual(answer);
    } finally {
      await upstream.close();
    }
  });
});
