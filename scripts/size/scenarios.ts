/**
 * The typical request of each function. Inference functions get the benchmark's requests
 * (bench/scenarios/requests.ts: its chat body, a provider key in Authorization, a member gateway key)
 * answered by the loopback fake upstream; control functions a GET of their list route with the owner
 * key; queue workers one message; log ingestion one request-log record per subscription event.
 */
import { CHAT_BODY, PROVIDER_KEY } from '../../bench/scenarios/requests';
import type { RequestSpec } from './events';

/** How the cost table groups functions. */
export type Family = 'inference' | 'control' | 'worker' | 'logs';

/** The added latency per request inference may cost (the gateway's performance target). */
export const INFERENCE_LATENCY_TARGET_MS = 2;
/** What a control route may take per request (a dashboard call; no provider behind it). */
export const CONTROL_LATENCY_TARGET_MS = 50;

export interface Measurement {
  /** The function measured (several measurements may size one function). */
  functionName: string;
  /** How the tables name this measurement. */
  label: string;
  family: Family;
  /** For inference, whether the answer is streamed. */
  streamed?: boolean;
  /** The provider's answer time the function waits for, billed as duration (inference). */
  waitMs: number;
  latencyTargetMs?: number;
  request: RequestSpec;
  /** Requests one invocation stands for (log records per subscription event); 1 otherwise. */
  requestsPerInvocation?: number;
}

/** Log records per subscription event in the batched log-ingest measurement. */
export const LOG_BATCH = 25;

export interface ScenarioContext {
  adminKey: string;
  memberKey: string;
  workspaceId: string;
  promptId: string;
  /** The queue ARN each worker reads, by function name. */
  queueArns: Record<string, string>;
  logGroup: string;
  /** A request-log line as the chat function writes it (log ingestion ingests copies of it). */
  requestLogLine?: string;
}

export const PROVIDER_WAIT_MS = 1_500;

const json = { 'content-type': 'application/json' };

function inference(ctx: ScenarioContext, body: unknown, provider = 'openai'): Record<string, string> & { body?: string } {
  return { ...json, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-api-key': ctx.memberKey, 'x-gateway-provider': provider, body: JSON.stringify(body) };
}

function post(path: string, resource: string, headers: Record<string, string> & { body?: string }, pathParameters?: Record<string, string>): RequestSpec {
  const { body, ...rest } = headers;
  return { kind: 'http', method: 'POST', path, resource, headers: rest, body, pathParameters };
}

function list(ctx: ScenarioContext, path: string, method = 'GET'): RequestSpec {
  return { kind: 'http', method, path, resource: path, headers: { 'x-gateway-api-key': ctx.adminKey } };
}

/** Control functions and their list route. */
const CONTROL_ROUTES: Record<string, string> = {
  apiKeys: '/v1/api-keys',
  workspaces: '/v1/workspaces',
  logs: '/v1/logs',
  providers: '/v1/providers',
  configs: '/v1/configs',
  guardrails: '/v1/guardrails',
  prompts: '/v1/prompts',
  rateLimits: '/v1/policies/rate-limits',
  usageLimits: '/v1/policies/usage-limits',
  mcpServers: '/v1/mcp-servers',
  jwtProviders: '/v1/auth/jwt-providers',
  files: '/v1/files',
  batches: '/v1/batches',
  fineTuning: '/v1/fine_tuning/jobs',
};

/** Every measurement, in the order they run (chat first: log ingestion replays its log line). */
export function measurements(ctx: ScenarioContext): Measurement[] {
  const chat = (stream: boolean): Measurement => ({
    functionName: 'chatCompletions',
    label: stream ? 'chatCompletions (stream)' : 'chatCompletions',
    family: 'inference',
    streamed: stream,
    waitMs: PROVIDER_WAIT_MS,
    latencyTargetMs: INFERENCE_LATENCY_TARGET_MS,
    request: post('/v1/chat/completions', '/v1/chat/completions', inference(ctx, stream ? { ...CHAT_BODY, stream: true } : CHAT_BODY)),
  });
  const inferenceOf = (functionName: string, request: RequestSpec): Measurement => ({
    functionName,
    label: functionName,
    family: 'inference',
    streamed: false,
    waitMs: PROVIDER_WAIT_MS,
    latencyTargetMs: INFERENCE_LATENCY_TARGET_MS,
    request,
  });
  const [system, user] = CHAT_BODY.messages;
  const all: Measurement[] = [
    chat(false),
    chat(true),
    inferenceOf('completions', post('/v1/completions', '/v1/completions', inference(ctx, { model: 'gpt-3.5-turbo-instruct', prompt: user.content }))),
    inferenceOf('embeddings', post('/v1/embeddings', '/v1/embeddings', inference(ctx, { model: 'text-embedding-3-small', input: user.content }))),
    inferenceOf(
      'promptCompletions',
      post(`/v1/prompts/${ctx.promptId}/completions`, '/v1/prompts/{promptId}/completions', inference(ctx, { variables: { question: user.content } }), {
        promptId: ctx.promptId,
      }),
    ),
    // As the benchmark's responses scenario: translated to a chat completion of a provider without the API.
    inferenceOf(
      'responses',
      post('/v1/responses', '/v1/responses', inference(ctx, { model: CHAT_BODY.model, instructions: system.content, input: user.content }, 'groq')),
    ),
    inferenceOf(
      'messages',
      post('/v1/messages', '/v1/messages', inference(ctx, { model: CHAT_BODY.model, max_tokens: 256, system: system.content, messages: [user] })),
    ),
    inferenceOf('passthrough', {
      kind: 'http',
      method: 'GET',
      path: '/v1/models/gpt-4o-mini',
      resource: '/v1/{proxy+}',
      pathParameters: { proxy: 'models/gpt-4o-mini' },
      headers: { authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-api-key': ctx.memberKey, 'x-gateway-provider': 'openai' },
    }),
  ];
  for (const [functionName, path] of Object.entries(CONTROL_ROUTES)) {
    all.push({ functionName, label: functionName, family: 'control', waitMs: 0, latencyTargetMs: CONTROL_LATENCY_TARGET_MS, request: list(ctx, path) });
  }
  all.push({
    functionName: 'cache',
    label: 'cache',
    family: 'control',
    waitMs: 0,
    latencyTargetMs: CONTROL_LATENCY_TARGET_MS,
    request: list(ctx, '/v1/cache', 'DELETE'),
  });
  // The public routes: the API description and the console's page.
  for (const [functionName, path] of [
    ['openapi', '/v1/openapi.json'],
    ['console', '/console'],
  ]) {
    all.push({ functionName, label: functionName, family: 'control', waitMs: 0, latencyTargetMs: CONTROL_LATENCY_TARGET_MS, request: list(ctx, path) });
  }
  const worker = (functionName: string, body: unknown): Measurement => ({
    functionName,
    label: functionName,
    family: 'worker',
    waitMs: 0,
    request: { kind: 'sqs', body: JSON.stringify(body), queueArn: ctx.queueArns[functionName] ?? 'arn:aws:sqs:us-east-1:000000000000:size' },
  });
  const workspace_id = ctx.workspaceId;
  all.push(
    worker('responsesWorker', { workspace_id, response_id: 'resp_size_absent' }),
    worker('batchLifecycle', { kind: 'settle', workspace_id, batch_id: 'batch_size_absent' }),
    worker('batchChunks', { kind: 'chunk', workspace_id, batch_id: 'batch_size_absent', chunk: 0 }),
    worker('batchDeadLetters', { kind: 'chunk', workspace_id, batch_id: 'batch_size_absent', chunk: 0 }),
    worker('fineTuningLifecycle', { kind: 'follow', workspace_id, job_id: 'ftjob_size_absent' }),
  );
  for (const records of [1, LOG_BATCH]) {
    all.push({
      functionName: 'logIngest',
      label: records === 1 ? 'logIngest' : `logIngest (${records} records)`,
      family: 'logs',
      waitMs: 0,
      request: { kind: 'logs', line: ctx.requestLogLine ?? '{}', logGroup: ctx.logGroup, records },
      requestsPerInvocation: records,
    });
  }
  return all;
}
