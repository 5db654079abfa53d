/**
 * Reads `serverless.yml` for the local runtime: functions, HTTP routes, provider environment and
 * CloudFormation resources, with `${...}` variables resolved and CloudFormation intrinsics left in
 * long form. The parts: cloudformation-yaml.ts (YAML with CloudFormation tags), serverless-variables.ts
 * (the `${...}` variables), cloudformation-intrinsics.ts (resolving intrinsics once resources exist);
 * their entry points are re-exported from here.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LOCAL_ACCOUNT_ID } from './cloudformation-intrinsics';
import { isPlainObject } from '../../core/plain-object';
import { parseServerlessYaml } from './cloudformation-yaml';
import { VariableResolver } from './serverless-variables';

export { LOCAL_ACCOUNT_ID, resolveIntrinsics } from './cloudformation-intrinsics';
export { cloudFormationTags, parseServerlessYaml } from './cloudformation-yaml';

export interface ServerlessRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'HEAD' | 'OPTIONS' | 'ANY';
  /** As written in serverless.yml, with a leading slash, e.g. '/v1/{proxy+}'. */
  path: string;
  functionName: string;
  streaming: boolean;
  /** API Gateway integration timeout; 29000 unless the route or provider.apiGateway says otherwise. */
  integrationTimeoutMs: number;
}

export interface ServerlessFunction {
  name: string;
  /** Relative to the project root. */
  artifact: string;
  timeoutSeconds: number;
  memorySize: number;
  streaming: boolean;
  routes: ServerlessRoute[];
  /** The function's SQS event sources. */
  queues: ServerlessQueueSource[];
}

/** An `sqs` event of a function: the queue (its logical id in resources) and how Lambda polls it. */
export interface ServerlessQueueSource {
  functionName: string;
  /** The logical id of the AWS::SQS::Queue whose `Arn` the event names. */
  queue: string;
  batchSize: number;
  /** `functionResponseType: ReportBatchItemFailures`: only the messages the handler names failed come back. */
  reportsItemFailures: boolean;
  /** The event source's `maximumConcurrency`: the most invocations it runs at once. */
  maximumConcurrency?: number;
}

export interface ServerlessConfig {
  service: string;
  stage: string;
  region: string;
  functions: ServerlessFunction[];
  routes: ServerlessRoute[];
  /** provider.environment, `${}` resolved, intrinsics left as long-form objects. */
  environment: Record<string, unknown>;
  /** resources.Resources, `${}` resolved, intrinsics long-form. */
  resources: Record<string, { Type: string; Properties?: Record<string, any>; [k: string]: unknown }>;
}

const DEFAULT_REGION = 'us-east-1';
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;
/** The framework's defaults for functions that do not set them. */
const DEFAULT_TIMEOUT_SECONDS = 6;
const DEFAULT_MEMORY_SIZE = 1024;

const METHODS = new Set<ServerlessRoute['method']>(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'ANY']);

export function loadServerlessConfig(options: { file?: string; stage: string; region?: string }): ServerlessConfig {
  const file = options.file ?? path.join(process.cwd(), 'serverless.yml');
  const fileName = path.basename(file);
  const raw = parseServerlessYaml(readFileSync(file, 'utf8'), fileName);

  // The region may itself be a variable (`${opt:region, 'us-east-1'}`): resolve it with a resolver
  // that answers ${aws:region} from the options only.
  const optionValues = { stage: options.stage, region: options.region };
  const common = { stage: options.stage, accountId: LOCAL_ACCOUNT_ID, options: optionValues, env: process.env };
  const bootstrap = new VariableResolver(raw, { ...common, region: options.region ?? DEFAULT_REGION }, fileName);
  const providerRegion = options.region ?? bootstrap.resolvePath('provider.region');
  const region = typeof providerRegion === 'string' && providerRegion ? providerRegion : DEFAULT_REGION;
  const resolver = new VariableResolver(raw, { ...common, region }, fileName);

  const service = resolver.resolvePath('service');
  if (typeof service !== 'string' || !service) throw new Error(`${fileName}: "service" must be a string`);

  const provider = asObject(raw.provider);
  const apiGateway = asObject(resolver.resolvePath('provider.apiGateway'));
  const defaultIntegrationTimeout = numberOr(apiGateway.timeoutInMillis, DEFAULT_INTEGRATION_TIMEOUT_MS);
  const providerTimeout = numberOr(resolver.resolvePath('provider.timeout'), DEFAULT_TIMEOUT_SECONDS);
  const providerMemory = numberOr(resolver.resolvePath('provider.memorySize'), DEFAULT_MEMORY_SIZE);

  const functions: ServerlessFunction[] = [];
  for (const name of Object.keys(asObject(raw.functions))) {
    const definition = asObject(resolver.resolvePath(`functions.${name}`));
    const routes = httpRoutes(name, definition, defaultIntegrationTimeout, fileName);
    const artifact = asObject(definition.package).artifact;
    functions.push({
      name,
      artifact: normaliseRelative(typeof artifact === 'string' ? artifact : `.build/artifacts/${name}.zip`),
      timeoutSeconds: numberOr(definition.timeout, providerTimeout),
      memorySize: numberOr(definition.memorySize, providerMemory),
      streaming: routes.some((route) => route.streaming),
      routes,
      queues: queueSources(name, definition, fileName),
    });
  }

  const environment = 'environment' in provider ? asObject(resolver.resolvePath('provider.environment')) : {};
  const resources = asObject(asObject(raw.resources).Resources);
  const resolvedResources: ServerlessConfig['resources'] = {};
  for (const logicalId of Object.keys(resources)) {
    const resource = asObject(resolver.resolvePath(`resources.Resources.${logicalId}`));
    if (typeof resource.Type !== 'string') {
      throw new Error(`${fileName}: resource ${logicalId} has no Type`);
    }
    resolvedResources[logicalId] = resource as ServerlessConfig['resources'][string];
  }

  return {
    service,
    stage: options.stage,
    region,
    functions,
    routes: functions.flatMap((fn) => fn.routes),
    environment,
    resources: resolvedResources,
  };
}

function httpRoutes(functionName: string, definition: Record<string, unknown>, defaultIntegrationTimeout: number, fileName: string): ServerlessRoute[] {
  const events = Array.isArray(definition.events) ? definition.events : [];
  const routes: ServerlessRoute[] = [];
  for (const event of events) {
    if (!isPlainObject(event) || !('http' in event)) continue;
    const http = event.http;
    let method: string;
    let routePath: string;
    let settings: Record<string, unknown> = {};
    if (typeof http === 'string') {
      // Short form: `http: POST /v1/things`.
      const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(http);
      if (!match) throw new Error(`${fileName}: function ${functionName}: cannot read http event "${http}"`);
      [, method, routePath] = match;
    } else if (isPlainObject(http)) {
      settings = http;
      method = String(http.method ?? '');
      routePath = String(http.path ?? '');
    } else {
      throw new Error(`${fileName}: function ${functionName}: http event must be a string or a mapping`);
    }
    const upper = method.toUpperCase() as ServerlessRoute['method'];
    if (!METHODS.has(upper)) {
      throw new Error(`${fileName}: function ${functionName}: unsupported http method "${method}"`);
    }
    const response = asObject(settings.response);
    const transferMode = typeof response.transferMode === 'string' ? response.transferMode.toUpperCase() : 'BUFFERED';
    routes.push({
      method: upper,
      path: normaliseRoutePath(routePath),
      functionName,
      streaming: transferMode === 'STREAM',
      integrationTimeoutMs: numberOr(settings.timeoutInMillis, defaultIntegrationTimeout),
    });
  }
  return routes;
}

function queueSources(functionName: string, definition: Record<string, unknown>, fileName: string): ServerlessQueueSource[] {
  const events = Array.isArray(definition.events) ? definition.events : [];
  const sources: ServerlessQueueSource[] = [];
  for (const event of events) {
    if (!isPlainObject(event) || !('sqs' in event)) continue;
    const sqs = asObject(event.sqs);
    const arn = asObject(sqs.arn)['Fn::GetAtt'];
    if (!Array.isArray(arn) || arn[1] !== 'Arn' || typeof arn[0] !== 'string') {
      throw new Error(`${fileName}: function ${functionName}: an sqs event must name its queue as arn: !GetAtt <Queue>.Arn`);
    }
    sources.push({
      functionName,
      queue: arn[0],
      batchSize: numberOr(sqs.batchSize, 10),
      reportsItemFailures: sqs.functionResponseType === 'ReportBatchItemFailures',
      maximumConcurrency: typeof sqs.maximumConcurrency === 'number' ? sqs.maximumConcurrency : undefined,
    });
  }
  return sources;
}

function normaliseRoutePath(routePath: string): string {
  const trimmed = routePath.trim().replace(/^\/+/, '').replace(/\/+$/, '');
  return `/${trimmed}`;
}

function normaliseRelative(file: string): string {
  return path.posix.normalize(file.replace(/\\/g, '/')).replace(/^\.\//, '');
}

function asObject(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}

function numberOr(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return fallback;
}
