/**
 * Runs the build and `serverless package --stage ci` (osls, offline, dummy credentials) once per
 * module instance (vitest isolates test files, so once per test file) and reads the CloudFormation
 * template it produces. Each run packages into its own temporary directory (`--package`) instead of
 * `.serverless/`, so test files running in parallel never read a template another run is rewriting.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const STAGE = 'ci';
/** Long enough for a cold build and package on a slow 2-core CI machine. */
export const PACKAGE_TIMEOUT_MS = 240_000;

export interface CfnResource {
  Type: string;
  Properties?: Record<string, any>;
  DependsOn?: string | string[];
  [key: string]: unknown;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  [key: string]: unknown;
}

/** Environment for osls: no real AWS configuration can leak in, nothing calls home. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AWS_') && !key.startsWith('SLS_') && !key.startsWith('SERVERLESS_')) env[key] = value;
  }
  return {
    ...env,
    // AWS's documented example key pair: syntactically valid, never real.
    AWS_ACCESS_KEY_ID: 'AKIAIOSFODNN7EXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_CONFIG_FILE: os.devNull,
    AWS_SHARED_CREDENTIALS_FILE: os.devNull,
    AWS_EC2_METADATA_DISABLED: 'true',
    SLS_TELEMETRY_DISABLED: '1',
    SLS_TRACKING_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    SLS_INTERACTIVE_SETUP_DISABLE: '1',
    CI: '1',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
  };
}

function describeFailure(step: string, error: unknown): Error {
  const { stdout, stderr, message } = error as { stdout?: string; stderr?: string; message?: string };
  return new Error(`${step} failed: ${message ?? String(error)}\n--- stdout ---\n${stdout ?? ''}\n--- stderr ---\n${stderr ?? ''}`);
}

async function build(): Promise<void> {
  try {
    await run(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'build.mjs')], {
      cwd: PROJECT_ROOT,
      env: offlineEnv(),
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    throw describeFailure('node scripts/build.mjs', error);
  }
}

let built: Promise<void> | undefined;

/** `node scripts/build.mjs`, once per process: the function bundles, their metafiles and zips. */
export function builtFunctions(): Promise<void> {
  built ??= build();
  return built;
}

async function buildAndPackage(): Promise<CfnTemplate> {
  const env = offlineEnv();
  await builtFunctions();

  const outDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-sls-package-'));
  const slsBin = createRequire(path.join(PROJECT_ROOT, 'package.json')).resolve('osls/bin/serverless.js');
  try {
    await run(process.execPath, [slsBin, 'package', '--stage', STAGE, '--package', outDir], {
      cwd: PROJECT_ROOT,
      env,
      maxBuffer: 16 * 1024 * 1024,
      timeout: PACKAGE_TIMEOUT_MS,
    });
    return JSON.parse(readFileSync(path.join(outDir, 'cloudformation-template-update-stack.json'), 'utf8')) as CfnTemplate;
  } catch (error) {
    throw describeFailure(`serverless package --stage ${STAGE}`, error);
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

let packaged: Promise<CfnTemplate> | undefined;

/** The template of `serverless package --stage ci` (built and packaged once per process). */
export function packagedTemplate(): Promise<CfnTemplate> {
  packaged ??= buildAndPackage();
  return packaged;
}

// -------------------------------------------------------------------------------------------------
// Reading the template

export function resourcesOfType(template: CfnTemplate, type: string): Array<[string, CfnResource]> {
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === type);
}

/** Logical ids referenced by `Fn::GetAtt` anywhere inside `value`. */
export function getAttTargets(value: unknown): string[] {
  const found: string[] = [];
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(visit);
    else if (node && typeof node === 'object') {
      for (const [key, child] of Object.entries(node)) {
        if (key === 'Fn::GetAtt') {
          const target = Array.isArray(child) ? child[0] : String(child).split('.')[0];
          if (typeof target === 'string') found.push(target);
        }
        visit(child);
      }
    }
  };
  visit(value);
  return found;
}

export function refOf(value: unknown): string | undefined {
  return value && typeof value === 'object' && typeof (value as { Ref?: unknown }).Ref === 'string' ? (value as { Ref: string }).Ref : undefined;
}

export function dependsOn(resource: CfnResource): string[] {
  if (!resource.DependsOn) return [];
  return Array.isArray(resource.DependsOn) ? resource.DependsOn : [resource.DependsOn];
}

/** The last literal string of an integration URI's Fn::Join (`/invocations` or `/response-streaming-invocations`). */
export function uriSuffix(uri: unknown): string {
  const parts = (uri as { 'Fn::Join'?: [string, unknown[]] })?.['Fn::Join']?.[1];
  if (!Array.isArray(parts)) return typeof uri === 'string' ? uri : '';
  const last = parts[parts.length - 1];
  return typeof last === 'string' ? last : '';
}

/** Full path of an AWS::ApiGateway::Resource, following ParentId up to the REST API root. */
export function resourcePath(template: CfnTemplate, logicalId: string): string {
  const segments: string[] = [];
  let current: string | undefined = logicalId;
  const seen = new Set<string>();
  while (current) {
    if (seen.has(current)) throw new Error(`cycle in API Gateway resources at ${current}`);
    seen.add(current);
    const resource: CfnResource | undefined = template.Resources[current];
    if (!resource || resource.Type !== 'AWS::ApiGateway::Resource') {
      throw new Error(`${current} is not an AWS::ApiGateway::Resource in the template`);
    }
    segments.unshift(String(resource.Properties?.PathPart));
    current = refOf(resource.Properties?.ParentId); // the root is Fn::GetAtt [RestApi, RootResourceId]
  }
  return `/${segments.join('/')}`;
}

export interface TemplateRoute {
  method: string;
  path: string;
  methodLogicalId: string;
  /** Logical id of the AWS::Lambda::Function the integration invokes. */
  functionLogicalId: string;
  /** The function's key in serverless.yml (FunctionName minus "<service>-<stage>-"). */
  functionName: string;
  integration: Record<string, any>;
}

/** Every AWS::ApiGateway::Method as METHOD + full path → the Lambda function its integration invokes. */
export function templateRoutes(template: CfnTemplate): TemplateRoute[] {
  return resourcesOfType(template, 'AWS::ApiGateway::Method').map(([methodLogicalId, method]) => {
    const props = method.Properties ?? {};
    const resourceId = refOf(props.ResourceId);
    const routePath = resourceId ? resourcePath(template, resourceId) : '/';
    const integration = (props.Integration ?? {}) as Record<string, any>;
    const targets = getAttTargets(integration.Uri).filter((id) => template.Resources[id]?.Type === 'AWS::Lambda::Function');
    if (targets.length !== 1) throw new Error(`${methodLogicalId}: expected one Lambda target in the integration URI`);
    const [functionLogicalId] = targets;
    return {
      method: String(props.HttpMethod).toUpperCase(),
      path: routePath,
      methodLogicalId,
      functionLogicalId,
      functionName: functionKey(template, functionLogicalId),
      integration,
    };
  });
}

/** serverless.yml key of a packaged function: its FunctionName is "<service>-<stage>-<key>". */
export function functionKey(template: CfnTemplate, functionLogicalId: string): string {
  const name = template.Resources[functionLogicalId]?.Properties?.FunctionName;
  if (typeof name !== 'string') throw new Error(`${functionLogicalId} has no literal FunctionName`);
  const marker = `-${STAGE}-`;
  const index = name.indexOf(marker);
  if (index < 0) throw new Error(`${functionLogicalId}: FunctionName ${name} is not "<service>-${STAGE}-<key>"`);
  return name.slice(index + marker.length);
}
