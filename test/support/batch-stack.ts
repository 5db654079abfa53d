/**
 * A gateway of its own for the batch runs that need to stop and start it (the fault test) or count
 * its calls to AWS (the batch benchmark): emulators in this process, so their state and queued
 * messages outlive a gateway killed mid-batch, a fake upstream, and the gateway as `npm start`
 * runs it. `counting` puts a proxy in front of each emulator that counts the calls by action.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { toFile } from 'openai';
import OpenAI from 'openai';
import { startEmulators, type RunningEmulators } from '../../lib/local/emulators/emulators';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { spawnGateway, type SpawnedGateway } from './spawn-gateway';

export const stackAdminKey = 'gwk_batch_stack_admin_key_000000000000001';

export interface BatchStack {
  upstream: FakeUpstream;
  gateway: SpawnedGateway;
  /** Calls to each emulator by action (`PutItem`, `SendMessageBatch`, `PUT` …), when counting. */
  calls: Map<string, number>;
  /** Files and batches without a provider (the gateway's files); batches whose lines go to the fake under `/lines/v1`. */
  files: OpenAI;
  batches: OpenAI;
  /** Stops the gateway with SIGKILL, as a Lambda dies: no flush, no goodbye. */
  killGateway(): void;
  startGateway(): Promise<void>;
  /** Sends a raw message to one of the batch queues (`batch-chunk`, `batch-chunk-dlq`, …). */
  sendToQueue(queue: string, body: string): Promise<void>;
  workspaceId(): Promise<string>;
  stop(): Promise<void>;
}

export async function startBatchStack(options: { env?: Record<string, string>; counting?: boolean } = {}): Promise<BatchStack> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-batches-'));
  const emulators: RunningEmulators = await startEmulators({ dataDir });
  const calls = new Map<string, number>();
  const proxies: Server[] = [];
  const endpoints = { ...emulators.endpoints };
  if (options.counting) {
    for (const service of ['dynamodb', 'sqs', 's3'] as const) {
      const { server, url } = await countingProxy(emulators.endpoints[service]!, calls, service);
      proxies.push(server);
      endpoints[service] = url;
    }
  }
  const upstream = await startFakeUpstream({ record: false });
  const env = {
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: stackAdminKey,
    GATEWAY_DYNAMODB_ENDPOINT: endpoints.dynamodb,
    GATEWAY_SQS_ENDPOINT: endpoints.sqs,
    GATEWAY_S3_ENDPOINT: endpoints.s3,
    GATEWAY_LOG_FLUSH_MS: '50',
    ...options.env,
  };
  const stack: BatchStack = {
    upstream,
    gateway: await spawnGateway(env),
    calls,
    files: undefined as unknown as OpenAI,
    batches: undefined as unknown as OpenAI,
    killGateway: () => stack.gateway.process.kill('SIGKILL'),
    async startGateway() {
      stack.gateway = await spawnGateway(env);
      connect();
    },
    async sendToQueue(queue, body) {
      const sqs = new SQSClient({ endpoint: emulators.endpoints.sqs, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: `llm-gateway-local-${queue}` }));
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }));
      sqs.destroy();
    },
    async workspaceId() {
      const response = await fetch(`${stack.gateway.url}/api-keys?limit=100`, { headers: { 'x-gateway-api-key': stackAdminKey } });
      const body = (await response.json()) as { data: { role: string; workspace_id: string }[] };
      return body.data.find((key) => key.role === 'owner')!.workspace_id;
    },
    async stop() {
      await stack.gateway.stop();
      await upstream.close();
      for (const server of proxies) await new Promise((resolve) => server.close(resolve));
      await emulators.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  function connect() {
    const common = { baseURL: stack.gateway.url, maxRetries: 2, timeout: 60_000 };
    stack.files = new OpenAI({ ...common, apiKey: 'unused', defaultHeaders: { 'x-gateway-api-key': stackAdminKey } });
    stack.batches = new OpenAI({
      ...common,
      apiKey: 'sk-lines',
      defaultHeaders: { 'x-gateway-api-key': stackAdminKey, 'x-gateway-custom-host': `${upstream.url}/lines/v1` },
    });
  }
  connect();
  return stack;
}

/** A chat line of a batch's input; `model: "error-500"` makes the fake upstream answer 500. */
export function chatLine(customId: string, text: string, model = 'gpt-4o-mini') {
  return JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: text }] } });
}

export async function uploadBatchInput(files: OpenAI, lines: string[]): Promise<string> {
  const file = await files.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'input.jsonl'), purpose: 'batch' });
  return file.id;
}

export async function waitForBatch(client: OpenAI, id: string, done: (batch: OpenAI.Batch) => boolean, timeoutMs: number): Promise<OpenAI.Batch> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = await client.batches.retrieve(id).catch(() => undefined);
    if (batch && done(batch)) return batch;
    if (Date.now() > deadline) throw new Error(`Batch ${id} is ${batch?.status} after ${timeoutMs} ms (${JSON.stringify(batch?.request_counts)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function readJsonLines(files: OpenAI, id: string | null | undefined): Promise<any[]> {
  if (!id) return [];
  const text = await (await files.files.content(id)).text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** An HTTP proxy that counts each call by its action (the JSON protocols' X-Amz-Target, S3's method). */
async function countingProxy(target: string, calls: Map<string, number>, service: string): Promise<{ server: Server; url: string }> {
  const destination = new URL(target);
  const server = createServer((req, res) => {
    const amzTarget = req.headers['x-amz-target'];
    const action = typeof amzTarget === 'string' ? amzTarget.split('.').pop()! : `${service}:${req.method}`;
    calls.set(action, (calls.get(action) ?? 0) + 1);
    const forward = httpRequest({ host: destination.hostname, port: destination.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
