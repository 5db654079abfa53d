/**
 * What the measured functions run against, started as the benchmark starts it (bench/lib/services.ts):
 * the loopback fake upstream, the emulators in a process of their own, and once, to provision the
 * tables, queues and bucket and to write the organisation, the local gateway (`npm start`'s build).
 * Through the gateway the run makes a member key and a saved prompt, then stops it: from then on
 * only the function processes use the emulators. Nothing reaches a host other than 127.0.0.1.
 */
import path from 'node:path';
import { loadServerlessConfig, resolveIntrinsics } from '../../lib/local/template/serverless-config';
import { provisionResources } from '../../lib/local/template/provision';
import { repoRoot, startEmulators, startFakeUpstream, startGateway, type Service } from '../../bench/lib/services';
import { STREAM_CHUNKS } from '../../bench/environment';
import type { IndexShape } from './counting-proxy';
import type { ScenarioContext } from './scenarios';

export const ADMIN_KEY = 'gwk_size_admin_key_for_the_local_measurement_0001';
const region = 'us-east-1';
const stage = 'size';

export interface SizeEnvironment {
  services: Service[];
  endpoints: { dynamodb: string; sqs: string; s3: string };
  /** The environment every function process gets (its emulator endpoints are set per process). */
  functionEnv: Record<string, string>;
  context: ScenarioContext;
  memorySizes: Record<string, number>;
  /** Each table's global secondary indexes, by table name (the counting proxy adds their writes). */
  indexes: Record<string, IndexShape[]>;
}

async function call(url: string, method: string, key: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': key },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

export async function startSizeEnvironment(workDir: string, log: (line: string) => void): Promise<SizeEnvironment> {
  log('Starting the fake upstream and the emulators …');
  const [upstream, emulators] = await Promise.all([
    startFakeUpstream('fake-upstream', workDir, { chunks: STREAM_CHUNKS, burst: true }),
    startEmulators(workDir, path.join(workDir, 'emulators')),
  ]);
  const providerBaseUrls = JSON.stringify({ openai: `${upstream.url}/v1`, groq: `${upstream.url}/v1` });
  const gatewayDataDir = path.join(workDir, 'gateway');
  log('Provisioning through the local gateway …');
  const gateway = await startGateway(workDir, {
    GATEWAY_DATA_DIR: gatewayDataDir,
    GATEWAY_ADMIN_KEY: ADMIN_KEY,
    GATEWAY_STAGE: stage,
    GATEWAY_DYNAMODB_ENDPOINT: emulators.endpoints.dynamodb,
    GATEWAY_SQS_ENDPOINT: emulators.endpoints.sqs,
    GATEWAY_S3_ENDPOINT: emulators.endpoints.s3,
    GATEWAY_PROVIDER_BASE_URLS: providerBaseUrls,
  });
  let context: ScenarioContext;
  try {
    const member = await call(`${gateway.url}/api-keys`, 'POST', ADMIN_KEY, { name: 'size', role: 'member' });
    const workspaces = (await call(`${gateway.url}/workspaces`, 'GET', ADMIN_KEY)) as { data?: { id: string }[] };
    const prompt = await call(`${gateway.url}/prompts`, 'POST', ADMIN_KEY, {
      name: 'Size reply',
      string: JSON.stringify([
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: '{{question}}' },
      ]),
      model: 'gpt-4o-mini',
    });
    context = {
      adminKey: ADMIN_KEY,
      memberKey: String(member.key),
      workspaceId: workspaces.data?.[0]?.id ?? 'ws_default',
      promptId: String(prompt.id),
      queueArns: {},
      logGroup: `/aws/lambda/llm-gateway-${stage}`,
    };
  } finally {
    await gateway.service.stop();
  }

  // The environment the local runtime gives the functions (lib/local/runtime.ts), resolved here
  // against the resources the gateway provisioned (provisioning again finds them in place).
  process.env.GATEWAY_DYNAMODB_ENDPOINT = emulators.endpoints.dynamodb;
  process.env.GATEWAY_SQS_ENDPOINT = emulators.endpoints.sqs;
  process.env.GATEWAY_S3_ENDPOINT = emulators.endpoints.s3;
  process.env.AWS_REGION ??= region;
  const config = loadServerlessConfig({ file: path.join(repoRoot, 'serverless.yml'), stage, region });
  const resources = await provisionResources(config.resources, { region });
  const environment = resolveIntrinsics(config.environment, { ...resources, pseudo: { 'AWS::Region': region, 'AWS::AccountId': '000000000000' } }) as Record<
    string,
    unknown
  >;
  const functionEnv: Record<string, string> = { AWS_REGION: region, PATH: process.env.PATH ?? '' };
  for (const [name, value] of Object.entries(environment)) functionEnv[name] = String(value);
  Object.assign(functionEnv, {
    GATEWAY_MODE: 'local',
    GATEWAY_LOCAL_MASTER_KEY_FILE: path.join(gatewayDataDir, 'master.key'),
    GATEWAY_PROVIDER_BASE_URLS: providerBaseUrls,
    NODE_OPTIONS: '',
  });
  const indexes: Record<string, IndexShape[]> = {};
  for (const [logicalId, resource] of Object.entries(config.resources)) {
    if (resource.Type !== 'AWS::DynamoDB::Table') continue;
    const gsis = (resource.Properties?.GlobalSecondaryIndexes ?? []) as {
      KeySchema: { AttributeName: string; KeyType: string }[];
      Projection?: { ProjectionType?: string };
    }[];
    indexes[resources.ref(logicalId)] = gsis.map((gsi) => ({
      hashKey: gsi.KeySchema.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '',
      rangeKey: gsi.KeySchema.find((key) => key.KeyType === 'RANGE')?.AttributeName,
      projectsAll: gsi.Projection?.ProjectionType === 'ALL',
    }));
  }
  for (const fn of config.functions) for (const source of fn.queues) context.queueArns[fn.name] = resources.getAtt(source.queue, 'Arn');
  return {
    services: [upstream.service, emulators.service],
    endpoints: emulators.endpoints,
    functionEnv,
    context,
    memorySizes: Object.fromEntries(config.functions.map((fn) => [fn.name, fn.memorySize])),
    indexes,
  };
}
