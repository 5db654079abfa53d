import '../../lib/local/sdk-node-notice';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmulators } from '../../lib/local/emulators/emulators';
import { openAICompatibleProviders } from '../../lib/providers/openai-compatible/providers';
import { startFakeUpstream } from './fake-upstream';
import { spawnGateway } from './spawn-gateway';

export interface TestEnvironment {
  /** The shared gateway's base URL, including `/v1`. */
  gatewayUrl: string;
  adminKey: string;
  /** The shared fake upstream; every provider's base URL points at `<upstreamUrl>/<provider>/v1`. */
  upstreamUrl: string;
  endpoints: { dynamodb: string; sqs: string; s3: string };
  dataDir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    env: TestEnvironment;
  }
}

export const testAdminKey = 'gwk_test_admin_key_for_the_shared_gateway_0001';

interface SharedEnvironment {
  env: Promise<TestEnvironment>;
  stop: () => Promise<void>;
  users: number;
}

/**
 * Vitest runs a project's global setup once per project, each in a module instance of its own: the
 * environment is kept on the process's global object so that the integration, e2e, package and fuzz
 * projects share one set of emulators and one gateway, stopped when the last project is done.
 */
const sharedKey = Symbol.for('llm-gateway.test-environment');
const slot = globalThis as typeof globalThis & { [sharedKey]?: SharedEnvironment };

export default async function setup(project: TestProject) {
  slot[sharedKey] ??= startEnvironment();
  const shared = slot[sharedKey];
  shared.users++;
  project.provide('env', await shared.env);
  return async () => {
    if (--shared.users > 0) return;
    slot[sharedKey] = undefined;
    await shared.stop();
  };
}

/**
 * Starts what the integration and end-to-end tests share: the emulators, a fake upstream standing
 * in for every provider, and one gateway process as `npm start` runs it.
 */
function startEnvironment(): SharedEnvironment {
  const stops: Array<() => Promise<void>> = [];
  const env = (async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-test-'));
    stops.push(() => rm(dataDir, { recursive: true, force: true }));
    const emulators = await startEmulators({ dataDir });
    stops.push(() => emulators.stop());
    const upstream = await startFakeUpstream();
    stops.push(() => upstream.close());
    // Anthropic too, for the Message Batches its batches run on (its other tests bring a fake of their own).
    // Azure OpenAI at its resource's `/openai`, for the batches and fine-tuning jobs run there.
    const baseUrls = {
      ...Object.fromEntries([...openAICompatibleProviders.map((provider) => provider.name), 'anthropic'].map((name) => [name, `${upstream.url}/${name}/v1`])),
      'azure-openai': `${upstream.url}/azure-openai/openai`,
    };
    const gateway = await spawnGateway({
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_ADMIN_KEY: testAdminKey,
      GATEWAY_DYNAMODB_ENDPOINT: emulators.endpoints.dynamodb,
      GATEWAY_SQS_ENDPOINT: emulators.endpoints.sqs,
      GATEWAY_S3_ENDPOINT: emulators.endpoints.s3,
      GATEWAY_PROVIDER_BASE_URLS: JSON.stringify(baseUrls),
      GATEWAY_LOG_FLUSH_MS: '20',
      GATEWAY_RETRY_BASE_MS: '20',
      // A batch at a provider's batch API is looked at again after a second, not half a minute.
      GATEWAY_BATCH_FOLLOW_SECONDS: '1',
      GATEWAY_BATCH_PROVIDER_SILENCE_SECONDS: '3',
    });
    stops.push(() => gateway.stop());
    return { gatewayUrl: gateway.url, adminKey: testAdminKey, upstreamUrl: upstream.url, endpoints: emulators.endpoints, dataDir };
  })();
  // In the reverse order of starting, so the gateway stops before the emulators it writes to.
  const stopStarted = async () => {
    for (const stopOne of stops.splice(0).reverse()) await stopOne();
  };
  // A half-started environment is stopped at once: no project gets it, so none would stop it.
  const ready = env.catch(async (error: unknown) => {
    await stopStarted();
    throw error;
  });
  return { env: ready, stop: stopStarted, users: 0 };
}
