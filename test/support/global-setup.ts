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

/**
 * Starts what the integration and end-to-end tests share: the emulators, a fake upstream standing
 * in for every provider, and one gateway process as `npm start` runs it.
 */
export default async function setup(project: TestProject) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-test-'));
  const emulators = await startEmulators({ dataDir });
  const upstream = await startFakeUpstream();
  const baseUrls = Object.fromEntries(openAICompatibleProviders.map((provider) => [provider.name, `${upstream.url}/${provider.name}/v1`]));
  const gateway = await spawnGateway({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: testAdminKey,
    GATEWAY_DYNAMODB_ENDPOINT: emulators.endpoints.dynamodb,
    GATEWAY_SQS_ENDPOINT: emulators.endpoints.sqs,
    GATEWAY_S3_ENDPOINT: emulators.endpoints.s3,
    GATEWAY_PROVIDER_BASE_URLS: JSON.stringify(baseUrls),
    GATEWAY_LOG_FLUSH_MS: '20',
    GATEWAY_RETRY_BASE_MS: '20',
  });
  project.provide('env', { gatewayUrl: gateway.url, adminKey: testAdminKey, upstreamUrl: upstream.url, endpoints: emulators.endpoints, dataDir });
  return async () => {
    await gateway.stop();
    await upstream.close();
    await emulators.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
}
