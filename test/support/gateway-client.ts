import OpenAI from 'openai';
import { inject } from 'vitest';

export const env = () => inject('env');

/** A fetch Response whose JSON is loosely typed, for assertions. */
export type TestResponse = Omit<Response, 'json'> & { json(): Promise<any> };

/** fetch against the shared gateway with the admin key unless other headers say otherwise. */
export function gatewayFetch(path: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<TestResponse> {
  const { gatewayUrl, adminKey } = env();
  return fetch(`${gatewayUrl}${path}`, { ...init, headers: { 'x-gateway-api-key': adminKey, ...init.headers } });
}

/**
 * The official OpenAI client pointed at the gateway, as the README shows. `provider: null` sends no
 * provider header: the client of the gateway's own Files API.
 */
export function openaiClient(options: { provider?: string | null; apiKey?: string; gatewayKey?: string; headers?: Record<string, string> } = {}): OpenAI {
  const { gatewayUrl, adminKey } = env();
  const provider = options.provider === null ? {} : { 'x-gateway-provider': options.provider ?? 'openai' };
  return new OpenAI({
    baseURL: gatewayUrl,
    apiKey: options.apiKey ?? 'sk-provider-key',
    maxRetries: 0,
    defaultHeaders: { 'x-gateway-api-key': options.gatewayKey ?? adminKey, ...provider, ...options.headers },
  });
}

/**
 * Waits until at least `count` logs of a trace are stored (logs are written after the response) and
 * returns every stored record of the trace, newest first, following the pages.
 */
export async function waitForLogs(traceId: string, options: { count?: number; gatewayKey?: string; timeoutMs?: number } = {}): Promise<any[]> {
  // Ingestion adds each record into its rollups in a transaction, which the local stand-in runs one
  // at a time: on a busy machine a record may take seconds to be readable.
  const waitMs = options.timeoutMs ?? 15_000;
  const deadline = Date.now() + waitMs;
  for (;;) {
    const records = await readTrace(traceId, options.gatewayKey);
    if (records.length >= (options.count ?? 1)) return records;
    if (Date.now() > deadline) throw new Error(`${records.length} logs for trace ${traceId} after ${waitMs} ms, ${options.count ?? 1} expected`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Every stored record of a trace (none for an unknown trace), page after page. */
export async function readTrace(traceId: string, gatewayKey?: string): Promise<any[]> {
  const records: any[] = [];
  for (let after: string | undefined; ; ) {
    const path = `/logs/${encodeURIComponent(traceId)}${after ? `?after=${encodeURIComponent(after)}` : ''}`;
    const response = await gatewayFetch(path, { headers: gatewayKey ? { 'x-gateway-api-key': gatewayKey } : {} });
    if (response.status === 404 && !after) return records;
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
    const body = (await response.json()) as { data: any[]; has_more?: boolean; last_id?: string };
    records.push(...body.data);
    if (!body.has_more) return records;
    after = body.last_id;
  }
}

/** Another gateway process on the shared emulators (so it shares all state with the shared one). */
export async function spawnSharedGateway(extraEnv: Record<string, string> = {}) {
  const { spawnGateway } = await import('./spawn-gateway');
  const { endpoints, adminKey, dataDir } = env();
  return spawnGateway({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: adminKey,
    GATEWAY_DYNAMODB_ENDPOINT: endpoints.dynamodb,
    GATEWAY_SQS_ENDPOINT: endpoints.sqs,
    GATEWAY_S3_ENDPOINT: endpoints.s3,
    ...extraEnv,
  });
}
