/**
 * Managed batches through the official openai client: a gateway file in, the gateway's workers run
 * every line through the core against a fake provider, output and error files out. The lifecycle
 * through each state: completed, failed (an invalid file, with line numbers), cancelled and
 * expired (by writing the batch's stored deadline); lines the provider refuses; a 429 tried again;
 * and another workspace seeing none of it.
 */
import { GetItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { marshall } from '@aws-sdk/util-dynamodb';
import OpenAI, { NotFoundError, toFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchKey } from '../../lib/store/keys';
import { dynamoClient } from '../../lib/store/clients';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, openaiClient, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore, controlTable, createWorkspaceAdminKey } from '../support/gateway-store';
import { pollUntil } from '../support/poll';

const store = connectToGatewayStore();
let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

/** A client whose batch lines go to this file's fake upstream under `prefix`. */
function clientFor(prefix: string, headers: Record<string, string> = {}): OpenAI {
  return openaiClient({ headers: { 'x-gateway-custom-host': `${upstream.url}/${prefix}/v1`, ...headers } });
}

const gatewayFiles = () => openaiClient({ provider: null });

function chatLine(customId: string, text: string, extra: Record<string, unknown> = {}) {
  return {
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...extra },
  };
}

/** Uploads to the gateway's files (a client that selects no provider), as a batch's input. */
async function upload(_client: OpenAI, lines: unknown[]): Promise<string> {
  const text = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');
  const file = await gatewayFiles().files.create({ file: await toFile(Buffer.from(`${text}\n`), 'input.jsonl'), purpose: 'batch' });
  return file.id;
}

/** `count` chat answers of `content`, each after `delayMs`: lines still running when a test acts on the batch. */
function slowAnswers(count: number, delayMs: number, content: string) {
  const json = {
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  };
  return Array.from({ length: count }, () => ({ status: 200, delayMs, json }));
}

const ended = (batch: Batch) => ['completed', 'failed', 'expired', 'cancelled'].includes(batch.status);

async function waitForEnd(client: OpenAI, id: string, timeoutMs = 15_000): Promise<Batch> {
  return pollUntil(() => client.batches.retrieve(id), ended, timeoutMs);
}

async function fileLines(_client: OpenAI, id: string | null | undefined): Promise<any[]> {
  if (!id) return [];
  const text = await (await gatewayFiles().files.content(id)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe('managed batches', () => {
  it('runs every line through the core and writes the answers to an output file', async () => {
    const client = clientFor('done');
    const input = await upload(client, [chatLine('first', 'one'), chatLine('second', 'two'), chatLine('third', 'three')]);
    const created = await client.batches.create({
      input_file_id: input,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { team: 'search' },
    });
    expect(created).toMatchObject({
      object: 'batch',
      status: 'validating',
      input_file_id: input,
      endpoint: '/v1/chat/completions',
      metadata: { team: 'search' },
    });
    expect(created.id).toMatch(/^gwb_/);
    expect(created.expires_at).toBe(created.created_at + 24 * 3600);

    const batch = await waitForEnd(client, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    for (const stamp of ['in_progress_at', 'finalizing_at', 'completed_at'] as const) expect(batch[stamp]).toBeGreaterThanOrEqual(created.created_at);
    expect(batch.error_file_id).toBeNull();
    const output = await fileLines(client, batch.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual(['first', 'second', 'third']);
    const first = output.find((line) => line.custom_id === 'first');
    expect(first).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion' } }, error: null });
    expect(first.response.body.choices[0].message.content).toBe('echo: one');
    expect(first.id).toMatch(/^batch_req_/);
    expect(await gatewayFiles().files.retrieve(batch.output_file_id!)).toMatchObject({ purpose: 'batch_output', filename: `${batch.id}_output.jsonl` });
    expect(upstream.requests.filter((request) => request.path === '/done/v1/chat/completions')).toHaveLength(3);

    // A list that selects a provider is the provider's; the gateway's is listed without one.
    const listed = await gatewayFiles().batches.list({ limit: 100 });
    expect(listed.data.find((candidate) => candidate.id === batch.id)?.status).toBe('completed');

    // Each line is logged under the batch's id, with its custom_id; the batch's credentials are gone.
    const records = await waitForLogs(batch.id, { count: 3 });
    expect(records.map((record) => record.request_id).sort()).toEqual(['first', 'second', 'third']);
    expect(records[0]).toMatchObject({ status: 200, provider: 'openai', metadata: { batch_id: batch.id } });
    const stored = await dynamoClient().send(new GetItemCommand({ TableName: controlTable, Key: marshall(batchKey.item(store.workspaceId, batch.id)) }));
    expect(stored.Item?.sealed_options).toBeUndefined();
    expect(stored.Item?.input_file_id).toBeDefined();
  });

  it('runs an embeddings batch whose output is larger than one S3 piece, written in parts', async () => {
    const client = clientFor('embed');
    const lines = Array.from({ length: 160 }, (_, index) => ({
      custom_id: `vector-${index}`,
      method: 'POST',
      url: '/v1/embeddings',
      body: { model: 'text-embedding-3-large', input: `text number ${index}` },
    }));
    const created = await client.batches.create({ input_file_id: await upload(client, lines), endpoint: '/v1/embeddings', completion_window: '24h' });
    const batch = await waitForEnd(client, created.id, 30_000);
    expect(batch.request_counts).toEqual({ total: 160, completed: 160, failed: 0 });
    const file = await gatewayFiles().files.retrieve(batch.output_file_id!);
    // 3,072 floats a line: past the 5 MiB below which a file is one put.
    expect(file.bytes).toBeGreaterThan(5 * 1024 * 1024);
    const output = await fileLines(client, batch.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual(lines.map((line) => line.custom_id).sort());
    expect(output[0].response.body.data[0].embedding).toHaveLength(3072);
  });

  it('writes a line the provider refuses to the error file with its status and message, and counts it failed', async () => {
    const client = clientFor('refused');
    upstream.script('/refused/v1/chat/completions', [
      {
        status: 200,
        json: {
          id: 'c1',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        },
      },
      { status: 400, json: { error: { message: 'This model does not take that.', type: 'invalid_request_error', param: 'messages', code: 'bad_messages' } } },
    ]);
    const input = await upload(client, [chatLine('good', 'a'), chatLine('bad', 'b')]);
    const created = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: 'immediate' as '24h' });
    const batch = await waitForEnd(client, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const [refused] = await fileLines(client, batch.error_file_id);
    expect(refused.response.status_code).toBe(400);
    expect(refused.response.body.error.message).toBe('This model does not take that.');
    expect(refused.error.message).toMatch(/does not take that/);
    expect(await fileLines(client, batch.output_file_id)).toHaveLength(1);
  });

  it('tries a line answered 429 again later instead of failing it', async () => {
    const client = clientFor('busy');
    upstream.script('/busy/v1/chat/completions', [
      { status: 429, headers: { 'retry-after': '1' }, json: { error: { message: 'Slow down.', type: 'rate_limit_error', code: 'rate_limited' } } },
    ]);
    const input = await upload(client, [chatLine('patient', 'wait')]);
    const created = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await waitForEnd(client, created.id, 20_000);
    expect(batch.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    expect((await fileLines(client, batch.output_file_id))[0].response.body.choices[0].message.content).toBe('echo: wait');
  });

  it('fails an invalid input file, naming each bad line by its number', async () => {
    const client = clientFor('invalid');
    const input = await upload(client, [
      chatLine('a', 'x'),
      '{not json',
      chatLine('a', 'y'),
      { ...chatLine('c', 'z'), url: '/v1/embeddings' },
      { ...chatLine('d', 'w'), method: 'GET' },
    ]);
    const created = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await waitForEnd(client, created.id);
    expect(batch.status).toBe('failed');
    expect(batch.failed_at).toBeGreaterThanOrEqual(created.created_at);
    expect(batch.errors?.data?.map((error) => [error.line, error.code])).toEqual([
      [2, 'invalid_json_line'],
      [3, 'duplicate_custom_id'],
      [4, 'mismatched_url'],
      [5, 'invalid_method'],
    ]);
    expect(batch.errors?.data?.[1]?.message).toMatch(/used on line 1 already/);
    expect(upstream.requests.some((request) => request.path.startsWith('/invalid/'))).toBe(false);
  });

  it('refuses a create that names no batch file, a bad window or too much metadata', async () => {
    const client = clientFor('refuse');
    const notes = await gatewayFiles().files.create({ file: await toFile(Buffer.from('notes'), 'notes.txt'), purpose: 'user_data' });
    const refusal = (body: Record<string, unknown>) => client.batches.create(body as any).catch((error) => error);
    expect(await refusal({ input_file_id: notes.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).toMatchObject({
      status: 400,
      code: 'invalid_input_file',
    });
    const input = await upload(client, [chatLine('a', 'x')]);
    expect(await refusal({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '48h' })).toMatchObject({
      status: 400,
      param: 'completion_window',
    });
    expect(await refusal({ input_file_id: input, endpoint: '/v1/responses', completion_window: '24h' })).toMatchObject({ status: 400, param: 'endpoint' });
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v']));
    expect(await refusal({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h', metadata })).toMatchObject({
      status: 400,
      param: 'metadata',
    });
    expect(await refusal({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { k: 'v'.repeat(513) } })).toMatchObject(
      {
        status: 400,
      },
    );
  });

  it('cancels a running batch: cancelling at once, then cancelled with the lines finished so far', async () => {
    const client = clientFor('cancel');
    upstream.script('/cancel/v1/chat/completions', slowAnswers(48, 600, 'slow'));
    const input = await upload(
      client,
      Array.from({ length: 48 }, (_, index) => chatLine(`line-${index}`, `text ${index}`)),
    );
    const created = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await pollUntil(
      () => client.batches.retrieve(created.id),
      (batch) => batch.status === 'in_progress' && batch.request_counts!.completed > 0,
      10_000,
    );
    const cancelling = await client.batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).toBeGreaterThanOrEqual(created.created_at);
    const batch = await waitForEnd(client, created.id, 20_000);
    expect(batch.status).toBe('cancelled');
    expect(batch.cancelled_at).toBeGreaterThanOrEqual(cancelling.cancelling_at!);
    const output = await fileLines(client, batch.output_file_id);
    expect(output.length).toBe(batch.request_counts!.completed);
    expect(output.length).toBeLessThan(48);
    expect(await client.batches.cancel(created.id).catch((error) => error.status)).toBe(409);
  });

  it('expires a batch whose window has passed: unfinished lines go to the error file as batch_expired', async () => {
    const client = clientFor('expire');
    upstream.script('/expire/v1/chat/completions', slowAnswers(40, 500, 'late'));
    const input = await upload(
      client,
      Array.from({ length: 40 }, (_, index) => chatLine(`line-${index}`, `text ${index}`)),
    );
    const created = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await pollUntil(
      () => client.batches.retrieve(created.id),
      (batch) => batch.status === 'in_progress',
      10_000,
    );
    // The window ends now: the deadline the workers read is the stored one.
    await dynamoClient().send(
      new UpdateItemCommand({
        TableName: controlTable,
        Key: marshall(batchKey.item(store.workspaceId, created.id)),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: marshall({ ':past': Math.floor(Date.now() / 1000) - 1 }),
      }),
    );
    const batch = await waitForEnd(client, created.id, 20_000);
    expect(batch.status).toBe('expired');
    expect(batch.expired_at).toBeGreaterThanOrEqual(created.created_at);
    const output = await fileLines(client, batch.output_file_id);
    const errors = await fileLines(client, batch.error_file_id);
    expect(output.length + errors.length).toBe(40);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((line) => line.error.code === 'batch_expired' && line.response === null)).toBe(true);
    expect(new Set([...output, ...errors].map((line) => line.custom_id)).size).toBe(40);
    expect(batch.request_counts).toEqual({ total: 40, completed: output.length, failed: errors.length });
  });

  it('counts each line against the workspace’s budgets like a live request', async () => {
    // A workspace of its own: its budgets meet no other test's requests.
    const workspaceKey = await createWorkspaceAdminKey(`ws_batch_budget_${Date.now()}`);
    const as = (headers: Record<string, string> = {}) =>
      new OpenAI({
        baseURL: env().gatewayUrl,
        apiKey: 'sk-lines',
        maxRetries: 0,
        defaultHeaders: {
          'x-gateway-api-key': workspaceKey,
          'x-gateway-custom-host': `${upstream.url}/budget/v1`,
          'x-gateway-metadata': '{"team":"batchers"}',
          ...headers,
        },
      });
    const policyAnswer = await fetch(`${env().gatewayUrl}/policies/usage-limits`, {
      method: 'POST',
      headers: { 'x-gateway-api-key': workspaceKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'batch tokens',
        type: 'tokens',
        credit_limit: 1_000_000,
        conditions: [{ key: 'metadata.team', value: 'batchers' }],
        group_by: [{ key: 'metadata.team' }],
      }),
    });
    expect(policyAnswer.status, await policyAnswer.clone().text()).toBe(200);
    const policy = (await policyAnswer.json()) as { id: string };
    const files = new OpenAI({ baseURL: env().gatewayUrl, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': workspaceKey } });
    const input = await files.files.create({
      file: await toFile(Buffer.from([chatLine('a', 'one'), chatLine('b', 'two')].map((line) => JSON.stringify(line)).join('\n')), 'in.jsonl'),
      purpose: 'batch',
    });
    const created = await as().batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await pollUntil(() => as().batches.retrieve(created.id), ended, 15_000);
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const output = (await (await files.files.content(batch.output_file_id!)).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const tokens = output.reduce((sum, line) => sum + line.response.body.usage.total_tokens, 0);
    const usage = await pollUntil(
      () =>
        fetch(`${env().gatewayUrl}/policies/usage-limits/${policy.id}`, { headers: { 'x-gateway-api-key': workspaceKey } }).then(
          (response) => response.json() as Promise<{ current_usage: number }>,
        ),
      (answer) => answer.current_usage === tokens,
      5_000,
    );
    expect(usage.current_usage).toBe(tokens);
  });

  it('is invisible to another workspace', async () => {
    const client = clientFor('mine');
    const input = await upload(client, [chatLine('a', 'x')]);
    const created = await client.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const other = new OpenAI({ baseURL: env().gatewayUrl, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': store.otherWorkspaceKey } });
    await expect(other.batches.retrieve(created.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.batches.cancel(created.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await other.batches.list()).data.map((batch) => batch.id)).not.toContain(created.id);
    const refused = await other.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((error) => error);
    expect(refused.status).toBe(404);
    await waitForEnd(client, created.id);
  });
});

describe('batches run at the provider’s batch API', () => {
  // `x-gateway-provider: openai` with a 24h window: the fake provider's Batch API runs it.
  const atProvider = () => openaiClient();

  it('sends a 24h batch to the provider, follows it through its states and copies its files home', async () => {
    const input = await upload(atProvider(), [
      chatLine('one', 'first'),
      chatLine('two', 'second'),
      { ...chatLine('three', 'third'), body: { model: 'error-500', messages: [{ role: 'user', content: 'x' }] } },
    ]);
    const created = await atProvider().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(created.id).toMatch(/^gwb_/);
    const seen = new Set<string>();
    const batch = await pollUntil(
      async () => {
        const current = await atProvider().batches.retrieve(created.id);
        seen.add(current.status);
        return current;
      },
      ended,
      20_000,
    );
    expect(batch.status).toBe('completed');
    expect(seen.has('in_progress')).toBe(true);
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    expect(batch.completed_at).toBeGreaterThanOrEqual(created.created_at);
    expect(batch.output_file_id).toMatch(/^gwf_/);
    const output = await fileLines(atProvider(), batch.output_file_id);
    expect(output.map((line) => [line.custom_id, line.response.body.choices[0].message.content]).sort()).toEqual([
      ['one', 'echo: first'],
      ['two', 'echo: second'],
    ]);
    // The provider's own lines, as it wrote them (the fake numbers its ids).
    expect(output.every((line) => /^batch_req_\d{6}$/.test(line.id))).toBe(true);
    const [refused] = await fileLines(atProvider(), batch.error_file_id);
    expect(refused).toMatchObject({ custom_id: 'three', response: { status_code: 500 } });
  });

  it('ends once, with one set of files, when its lifecycle messages are delivered again and early', async () => {
    const input = await upload(atProvider(), [chatLine('x', 'one'), chatLine('y', 'two')]);
    const created = await atProvider().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await pollUntil(
      () => atProvider().batches.retrieve(created.id),
      (batch) => batch.status === 'in_progress',
      10_000,
    );
    // What SQS may do: the same follow-ups and settles again, and at once rather than after their delay.
    const sqs = new SQSClient({ endpoint: env().endpoints.sqs, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'llm-gateway-local-batch' }));
    for (const kind of ['follow', 'follow', 'follow', 'settle', 'validate', 'follow'])
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: JSON.stringify({ kind, workspace_id: store.workspaceId, batch_id: created.id }) }));
    sqs.destroy();
    const batch = await waitForEnd(atProvider(), created.id, 20_000);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 2, failed: 0 } });
    const output = await fileLines(atProvider(), batch.output_file_id);
    expect(output.map((line) => line.custom_id).sort()).toEqual(['x', 'y']);
    // Finalizing again (a late duplicate) keeps the same files: no second output file is listed.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const again = await atProvider().batches.retrieve(created.id);
    expect(again.output_file_id).toBe(batch.output_file_id);
    const outputs = await gatewayFiles().files.list({ purpose: 'batch_output' });
    expect(outputs.data.filter((file) => file.filename === `${created.id}_output.jsonl`)).toHaveLength(1);
  });

  it('passes a cancel on to the provider and ends cancelled when the provider says so', async () => {
    const input = await upload(atProvider(), [chatLine('a', 'x'), chatLine('b', 'y')]);
    const created = await atProvider().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await pollUntil(
      () => atProvider().batches.retrieve(created.id),
      (batch) => batch.status !== 'validating',
      10_000,
    );
    const cancelling = await atProvider().batches.cancel(created.id);
    expect(cancelling.status).toBe('cancelling');
    const batch = await waitForEnd(atProvider(), created.id, 20_000);
    expect(batch.status).toBe('cancelled');
    expect(batch.cancelled_at).toBeGreaterThanOrEqual(created.created_at);
  });

  it('ends as the provider’s batch ended (failed, with its errors), and fails one whose provider stops answering', async () => {
    const line = (outcome: string) => ({
      ...chatLine(`${outcome}-1`, 'x'),
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], metadata: { fake_outcome: outcome } },
    });
    const failedAtProvider = await atProvider().batches.create({
      input_file_id: await upload(atProvider(), [line('failed')]),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const silent = await atProvider().batches.create({
      input_file_id: await upload(atProvider(), [line('unanswered')]),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });

    const failed = await waitForEnd(atProvider(), failedAtProvider.id, 20_000);
    expect(failed.status).toBe('failed');
    expect(failed.errors?.data).toEqual([{ code: 'invalid_request', message: 'The fake provider refused the file.', param: null, line: 1 }]);

    // The provider answers 500 to every look; past the limit (3 s here) the batch fails and says why.
    const unanswered = await waitForEnd(atProvider(), silent.id, 30_000);
    expect(unanswered.status).toBe('failed');
    expect(unanswered.errors?.data?.[0]?.code).toBe('provider_unanswered');
    expect(unanswered.errors?.data?.[0]?.message).toMatch(/did not answer about batch batch_\d+ for \d+ s/);
  });

  it('runs an immediate batch, or one with a config, on the gateway’s own workers', async () => {
    const input = await upload(atProvider(), [chatLine('now', 'quick')]);
    const immediate = await atProvider().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: 'immediate' as '24h' });
    const config = JSON.stringify({ provider: 'openai', api_key: 'sk-config' });
    const configured = await openaiClient({ provider: null, headers: { 'x-gateway-config': config } }).batches.create({
      input_file_id: input,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    for (const created of [immediate, configured]) {
      const batch = await waitForEnd(atProvider(), created.id);
      expect(batch.status).toBe('completed');
      const [line] = await fileLines(atProvider(), batch.output_file_id);
      // The gateway's own line ids (batch_req_ + a time-sortable id), not the fake provider's numbered ones.
      expect(line.id).toMatch(/^batch_req_[0-9a-z]{26}$/);
    }
  });
});

describe('batches run at Anthropic’s Message Batches', () => {
  const anthropic = () => openaiClient({ provider: 'anthropic', apiKey: 'sk-ant-batch' });
  const claudeLine = (customId: string, text: string, extra: Record<string, unknown> = {}) => ({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: {
      model: 'claude-3-5-haiku-latest',
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: text },
      ],
      ...extra,
    },
  });

  it('translates each line to a Messages request and each result back to an OpenAI chat completion, under the client’s custom_id', async () => {
    // custom_ids Anthropic would refuse (too long, other characters): the gateway sends lines by number.
    const longId = `order/${'x'.repeat(80)}`;
    const input = await upload(anthropic(), [
      claudeLine(longId, 'hello'),
      claudeLine('second one', 'there'),
      { ...claudeLine('broken', 'x'), body: { ...claudeLine('broken', 'x').body, model: 'error-500' } },
    ]);
    const created = await anthropic().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await waitForEnd(anthropic(), created.id, 20_000);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const output = await fileLines(anthropic(), batch.output_file_id);
    const byId = Object.fromEntries(output.map((line) => [line.custom_id, line]));
    expect(Object.keys(byId).sort()).toEqual([longId, 'second one'].sort());
    expect(byId[longId].response).toMatchObject({ status_code: 200, request_id: 'msg_fake_line-1' });
    expect(byId[longId].response.body).toMatchObject({
      object: 'chat.completion',
      model: 'claude-3-5-haiku-latest',
      choices: [{ index: 0, message: { role: 'assistant', content: 'echo: hello' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    });
    const [refused] = await fileLines(anthropic(), batch.error_file_id);
    expect(refused).toMatchObject({
      custom_id: 'broken',
      response: { status_code: 500 },
      error: { code: 'api_error', message: 'The fake provider answered 500.' },
    });
  });

  it('fails a batch whose lines Anthropic cannot take, naming each line', async () => {
    const input = await upload(anthropic(), [claudeLine('fine', 'x'), claudeLine('two choices', 'y', { n: 2 })]);
    const created = await anthropic().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await waitForEnd(anthropic(), created.id);
    expect(batch.status).toBe('failed');
    expect(batch.errors?.data).toEqual([expect.objectContaining({ line: 2, code: 'unsupported_parameter', param: 'body.n' })]);
    expect(batch.errors?.data?.[0]?.message).toMatch(/^Line 2: n is not supported for anthropic/);
  });

  it('cancels at Anthropic: the batch ends cancelled, the requests not run in neither file', async () => {
    const input = await upload(anthropic(), [claudeLine('a', 'x'), claudeLine('b', 'y')]);
    const created = await anthropic().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await pollUntil(
      () => anthropic().batches.retrieve(created.id),
      (batch) => batch.status !== 'validating',
      10_000,
    );
    expect((await anthropic().batches.cancel(created.id)).status).toBe('cancelling');
    const batch = await waitForEnd(anthropic(), created.id, 20_000);
    expect(batch.status).toBe('cancelled');
    expect(batch.request_counts).toEqual({ total: 2, completed: 0, failed: 0 });
    expect(batch.error_file_id).toBeNull();
    expect(await fileLines(anthropic(), batch.output_file_id)).toEqual([]);
  });
});

describe('batches run as Mistral batch jobs', () => {
  const mistral = () => openaiClient({ provider: 'mistral-ai', apiKey: 'sk-mistral-batch' });
  const mistralLine = (customId: string, text: string, model = 'mistral-small-latest') => ({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model, max_completion_tokens: 50, messages: [{ role: 'user', content: text }] },
  });

  it('runs the lines as one job and maps Mistral’s finish reasons as the live route does', async () => {
    const input = await upload(mistral(), [mistralLine('short', 'hi'), mistralLine('long', 'a long story')]);
    const created = await mistral().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await waitForEnd(mistral(), created.id, 20_000);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const output = Object.fromEntries((await fileLines(mistral(), batch.output_file_id)).map((line) => [line.custom_id, line]));
    expect(output.short.response.body.choices[0]).toMatchObject({ message: { content: 'echo: hi' }, finish_reason: 'stop' });
    expect(output.long.response.body.choices[0].finish_reason).toBe('length');
  });

  it('fails a batch whose lines name more than one model, saying what to do', async () => {
    const input = await upload(mistral(), [mistralLine('a', 'x'), mistralLine('b', 'y', 'mistral-large-latest')]);
    const created = await mistral().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await waitForEnd(mistral(), created.id);
    expect(batch.status).toBe('failed');
    expect(batch.errors?.data).toEqual([expect.objectContaining({ code: 'mixed_models', line: 2, param: 'body.model' })]);
    expect(batch.errors?.data?.[0]?.message).toMatch(/one model/);
  });
});

describe('batches run at Azure OpenAI’s global batch', () => {
  const azure = () =>
    openaiClient({
      provider: 'azure-openai',
      apiKey: 'azure-key',
      headers: { 'x-gateway-cloudC-resource-name': 'orders-east', 'x-gateway-cloudC-api-version': '2024-10-21' },
    });

  it('sends the lines with Azure’s operation path and api-version, and copies the answers home', async () => {
    // The fake refuses a call without api-version and a batch whose endpoint or lines say /v1/….
    const input = await upload(azure(), [
      { ...chatLine('one', 'first'), body: { model: 'gpt-4o-global-batch', messages: [{ role: 'user', content: 'first' }] } },
      { ...chatLine('two', 'second'), body: { model: 'gpt-4o-global-batch', messages: [{ role: 'user', content: 'second' }] } },
    ]);
    const created = await azure().batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const batch = await waitForEnd(azure(), created.id, 20_000);
    expect(batch.errors).toBeFalsy();
    expect(batch).toMatchObject({ status: 'completed', endpoint: '/v1/chat/completions', request_counts: { total: 2, completed: 2, failed: 0 } });
    const output = await fileLines(azure(), batch.output_file_id);
    expect(output.map((line) => [line.custom_id, line.response.body.choices[0].message.content]).sort()).toEqual([
      ['one', 'echo: first'],
      ['two', 'echo: second'],
    ]);
  });
});

describe('a provider’s batches', () => {
  it('passes a batches request that selects a provider and names a provider file through', async () => {
    const answer = {
      id: 'batch_abc',
      object: 'batch',
      endpoint: '/v1/chat/completions',
      status: 'validating',
      input_file_id: 'file-abc',
      completion_window: '24h',
      created_at: 1,
    };
    upstream.script('/provider/v1/batches', [{ status: 200, json: answer }]);
    const created = await clientFor('provider').batches.create({ input_file_id: 'file-abc', endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(created).toEqual(answer);
  });
});
