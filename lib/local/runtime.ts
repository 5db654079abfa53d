import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBootstrap, type BootstrapResult } from '../auth/bootstrap';
import { startEmulators, type RunningEmulators } from './emulators/emulators';
import { installLambdaGlobals } from './lambda/lambda-globals';
import { installLogSink, type LogSink } from './triggers/log-sink';
import { startQueuePollers } from './triggers/queue-poller';
import { resumeUnfinishedBatches } from '../batches/resume';
import { resumeUnfinishedJobs } from '../fine-tuning/lifecycle';
import { provisionResources } from './template/provision';
import { startLocalServer, type LambdaHandler, type LocalServer } from './lambda/server';
import { loadServerlessConfig, resolveIntrinsics } from './template/serverless-config';

export interface LocalRuntimeOptions {
  /** Project root, where serverless.yml and .build/ are. */
  root: string;
  host: string;
  port: number;
  stage: string;
  dataDir: string;
  adminKey?: string;
  /** Running emulators to use instead of starting new ones. */
  endpoints: { dynamodb?: string; sqs?: string; s3?: string };
  logFlushIntervalMs?: number;
  /** The most invocations each queue's function runs at once (its event source's maximumConcurrency caps it further); default 4. */
  queueConcurrency?: number;
  /** The visibility timeout of each receive from a queue (default 30 s; on AWS it is the queue's). */
  queueVisibilitySeconds?: number;
}

export interface LocalRuntime {
  url: string;
  bootstrap: BootstrapResult;
  emulators: RunningEmulators;
  logs: LogSink;
  stop(): Promise<void>;
}

const region = 'us-east-1';
/**
 * On stop, requests under way get this long to finish; connections still busy after it (a stream,
 * a slow upstream) are cut, so stopping never waits on a client. What they log is still flushed.
 */
const inFlightGraceMs = 1_500;

/**
 * Each function's bundle is imported on its first invocation, as Lambda loads a function when it is
 * first called: a process that serves only chat never holds the other bundles (each carries its own
 * SDK copy, several MB of heap and code). A missing bundle fails at start, not at the first call.
 */
function functionLoader(names: string[], root: string): (name: string) => LambdaHandler | Promise<LambdaHandler> {
  const bundles = new Map(names.map((name) => [name, path.join(root, '.build', 'functions', name, 'index.mjs')]));
  for (const [name, bundle] of bundles)
    if (!existsSync(bundle)) throw new Error(`The bundle of function ${name} is missing (${bundle}); build with \`npm run build -- --local\`.`);
  const loaded = new Map<string, LambdaHandler | Promise<LambdaHandler>>();
  return (name) => {
    let handler = loaded.get(name);
    if (handler === undefined) {
      const bundle = bundles.get(name);
      if (!bundle) throw new Error(`No function ${name} behind a route`);
      handler = (import(pathToFileURL(bundle).href) as Promise<{ handler: LambdaHandler }>).then((module) => {
        loaded.set(name, module.handler);
        return module.handler;
      });
      loaded.set(name, handler);
      // A failed import is tried again on the next call rather than remembered.
      handler.catch(() => loaded.delete(name));
    }
    return handler;
  };
}

/**
 * The local runtime: emulators, the resources of serverless.yml, the environment the functions get
 * on AWS, the function bundles behind a local API Gateway, and the first-start bootstrap.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const config = loadServerlessConfig({ file: path.join(options.root, 'serverless.yml'), stage: options.stage, region });
  const emulators = await startEmulators({ dataDir: options.dataDir, use: options.endpoints });
  process.env.GATEWAY_DYNAMODB_ENDPOINT = emulators.endpoints.dynamodb;
  process.env.GATEWAY_SQS_ENDPOINT = emulators.endpoints.sqs;
  process.env.GATEWAY_S3_ENDPOINT = emulators.endpoints.s3;
  process.env.AWS_REGION ??= region;

  const resources = await provisionResources(config.resources, { region });
  const environment = resolveIntrinsics(config.environment, { ...resources, pseudo: { 'AWS::Region': region, 'AWS::AccountId': '000000000000' } }) as Record<
    string,
    unknown
  >;
  for (const [name, value] of Object.entries(environment)) process.env[name] = String(value);
  // Local mode is set explicitly, never inferred: it allows loopback upstreams.
  process.env.GATEWAY_MODE = 'local';
  process.env.GATEWAY_LOCAL_MASTER_KEY_FILE = path.join(options.dataDir, 'master.key'); // wraps the data keys of stored secrets

  installLambdaGlobals();
  // Functions behind routes and queues run in this process; log ingestion runs in the log worker.
  const handlerFor = functionLoader(
    config.functions.filter((candidate) => candidate.routes.length > 0 || candidate.queues.length > 0).map((fn) => fn.name),
    options.root,
  );
  if (!config.functions.some((fn) => fn.name === 'logIngest')) throw new Error('serverless.yml has no logIngest function');
  const logs = await installLogSink({
    worker: path.join(options.root, '.build', 'local', 'log-worker.mjs'),
    ingestBundle: path.join(options.root, '.build', 'functions', 'logIngest', 'index.mjs'),
    logGroup: `/aws/lambda/${config.service}-${options.stage}`,
    intervalMs: options.logFlushIntervalMs,
  });

  const bootstrap = await ensureBootstrap({ adminKey: options.adminKey });
  let server: LocalServer;
  try {
    server = await startLocalServer({
      host: options.host,
      port: options.port,
      stage: options.stage,
      service: config.service,
      routes: config.routes,
      functions: config.functions,
      handlerFor,
    });
  } catch (error) {
    await logs.stop();
    await emulators.stop();
    throw error;
  }
  const pollers = startQueuePollers({
    service: config.service,
    stage: options.stage,
    region,
    visibilitySeconds: options.queueVisibilitySeconds ?? 30,
    handlerFor,
    sources: config.functions.flatMap((fn) =>
      fn.queues.map((source) => ({
        source,
        fn,
        queueUrl: resources.ref(source.queue),
        queueArn: resources.getAtt(source.queue, 'Arn'),
        concurrency: Math.min(source.maximumConcurrency ?? Number.POSITIVE_INFINITY, options.queueConcurrency ?? 4),
      })),
    ),
  });
  // The queue emulator keeps no message across restarts; DynamoDB keeps the batches.
  await resumeUnfinishedBatches();
  await resumeUnfinishedJobs();
  return {
    url: `${server.url}/v1`,
    bootstrap,
    emulators,
    logs,
    async stop() {
      // In this order: no new requests, then every log line stored (the log worker writes to the
      // emulators), then the emulators.
      const cut = setTimeout(() => server.server.closeAllConnections(), inFlightGraceMs);
      await server.close();
      clearTimeout(cut);
      await pollers.stop();
      await logs.stop();
      await emulators.stop();
    },
  };
}
