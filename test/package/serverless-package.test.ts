/**
 * `serverless package --stage ci` works offline and produces the stack the design asks for:
 * streamed inference routes, buffered control routes, one least-privilege role per function, arm64
 * nodejs22.x functions, a REGIONAL REST API taking any body as binary, request-log subscriptions to
 * logIngest, and our JSON error body on API Gateway's own errors.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadServerlessConfig } from '../../lib/local/template/serverless-config';
import { definedRoutes } from '../../lib/openapi/defined-routes';
import {
  PACKAGE_TIMEOUT_MS,
  PROJECT_ROOT,
  STAGE,
  dependsOn,
  functionKey,
  getAttTargets,
  packagedTemplate,
  refOf,
  resourcesOfType,
  templateRoutes,
  uriSuffix,
  type CfnResource,
  type CfnTemplate,
} from './packaged-template';

const INFERENCE_FUNCTIONS = ['chatCompletions', 'completions', 'embeddings', 'promptCompletions', 'passthrough', 'messages'];
const CONTROL_FUNCTIONS = ['apiKeys', 'logs', 'providers', 'configs', 'prompts'];
/** Functions of public routes that are not defined routes (`isPublic` on the handler): static files. */
const PUBLIC_FUNCTIONS = ['console'];
const REQUEST_LOG_FILTER = '{ $.type = "gateway.request" }';
const IAM_TYPES = new Set(['AWS::IAM::Role', 'AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy']);

let template: CfnTemplate;
/** Every function of serverless.yml. */
let allFunctions: string[];
/** The functions behind at least one API Gateway route. */
let httpFunctions: string[];

beforeAll(async () => {
  allFunctions = listFunctions().map((fn) => fn.name);
  template = await packagedTemplate();
  httpFunctions = [...new Set(templateRoutes(template).map((route) => route.functionName))];
}, PACKAGE_TIMEOUT_MS);

/** Function names and handler sources as the build reads them (functions/<kebab-case>.ts). */
function listFunctions(): Array<{ name: string; source: string }> {
  const config = loadServerlessConfig({ file: path.join(PROJECT_ROOT, 'serverless.yml'), stage: STAGE });
  return config.functions.map((fn) => ({
    name: fn.name,
    source: `functions/${fn.name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase()}.ts`,
  }));
}

function lambdaFunctions(): Array<[string, CfnResource]> {
  return resourcesOfType(template, 'AWS::Lambda::Function');
}

function lambdaLogicalId(name: string): string {
  const found = lambdaFunctions().find(([id]) => functionKey(template, id) === name);
  if (!found) throw new Error(`function ${name} is not in the packaged template`);
  return found[0];
}

function logGroupLogicalId(name: string): string {
  const functionName = template.Resources[lambdaLogicalId(name)].Properties?.FunctionName;
  const found = resourcesOfType(template, 'AWS::Logs::LogGroup').find(([, group]) => group.Properties?.LogGroupName === `/aws/lambda/${functionName}`);
  if (!found) throw new Error(`no log group resource for ${name}`);
  return found[0];
}

function asList<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

interface Statement {
  Effect?: string;
  Action?: string | string[];
  NotAction?: string | string[];
  Resource?: unknown;
  NotResource?: unknown;
}

/** Identity-policy statements of an IAM resource (a role's trust policy is not one of them). */
function policyStatements(resource: CfnResource): Statement[] {
  const props = resource.Properties ?? {};
  const documents =
    resource.Type === 'AWS::IAM::Role'
      ? asList(props.Policies as Array<{ PolicyDocument?: { Statement?: unknown } }>).map((policy) => policy.PolicyDocument)
      : [props.PolicyDocument];
  return documents.flatMap((document) => asList(document?.Statement as Statement | Statement[]));
}

/** Why an Allow statement is too broad, or null. */
function broadAllowReason(statement: Statement): string | null {
  if (statement.Effect !== 'Allow') return null;
  if (statement.NotAction !== undefined) return 'Allow with NotAction';
  if (statement.NotResource !== undefined) return 'Allow with NotResource';
  const resources = asList(statement.Resource);
  if (resources.length === 0) return 'Allow without Resource';
  if (resources.some((resource) => resource === '*')) return 'Resource "*"';
  const wildcard = asList(statement.Action).find((action) => action === '*' || /^[a-z0-9-]+:\*$/i.test(action));
  if (wildcard) return `action ${wildcard}`;
  return null;
}

function roleOf(name: string): [string, CfnResource] {
  const role = template.Resources[lambdaLogicalId(name)].Properties?.Role;
  const [roleId] = getAttTargets(role);
  expect(roleId, `${name} has a role from this template`).toBeTypeOf('string');
  const resource = template.Resources[roleId];
  expect(resource?.Type).toBe('AWS::IAM::Role');
  return [roleId, resource];
}

/** action → the logical ids of the resources it is allowed on (tables via GetAtt, index ARNs as "<Table>/index/*"). */
function allowedActions(statements: Statement[], service: string): Map<string, Set<string>> {
  const allowed = new Map<string, Set<string>>();
  for (const statement of statements) {
    if (statement.Effect !== 'Allow') continue;
    for (const action of asList(statement.Action).filter((a) => a.startsWith(`${service}:`))) {
      const targets = allowed.get(action) ?? new Set<string>();
      for (const resource of asList(statement.Resource)) {
        const join = (resource as { 'Fn::Join'?: [string, unknown[]] })?.['Fn::Join'];
        const suffix = join ? join[1].filter((part) => typeof part === 'string').join('') : '';
        for (const target of getAttTargets(resource)) targets.add(`${target}${suffix}`);
      }
      allowed.set(action, targets);
    }
  }
  return allowed;
}

function expectAllowed(name: string, service: string, expected: Record<string, string[]>): void {
  const [, role] = roleOf(name);
  const actual = allowedActions(policyStatements(role), service);
  expect(Object.fromEntries([...actual].map(([action, targets]) => [action, [...targets].sort()])), `${service} permissions of ${name}`).toEqual(
    Object.fromEntries(Object.entries(expected).map(([action, targets]) => [action, [...targets].sort()])),
  );
}

/** Substitutes $context variables so a gateway response template can be parsed as JSON. */
function renderGatewayTemplate(body: string): unknown {
  return JSON.parse(body.replace(/\$context\.error\.messageString/g, '"Something happened"').replace(/\$context\.[A-Za-z.]+/g, 'X'));
}

describe('serverless package --stage ci', () => {
  it('bundles a handler source for every function in serverless.yml', () => {
    const missing = listFunctions().filter(({ source }) => !existsSync(path.join(PROJECT_ROOT, source)));
    expect(missing, 'functions without a handler file (the build wrote empty placeholder zips)').toEqual([]);
  });

  it('packages exactly the functions of serverless.yml, including the gateway’s own', () => {
    expect(allFunctions).toEqual(expect.arrayContaining([...INFERENCE_FUNCTIONS, ...CONTROL_FUNCTIONS, 'logIngest']));
    expect(
      lambdaFunctions()
        .map(([id]) => functionKey(template, id))
        .sort(),
    ).toEqual([...allFunctions].sort());
    expect(httpFunctions).not.toContain('logIngest');
  });

  it('streams the inference routes for up to 15 minutes', () => {
    const routes = templateRoutes(template).filter((route) => INFERENCE_FUNCTIONS.includes(route.functionName));
    expect(new Set(routes.map((route) => route.functionName))).toEqual(new Set(INFERENCE_FUNCTIONS));
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      expect(route.integration.Type, where).toBe('AWS_PROXY');
      expect(route.integration.ResponseTransferMode, where).toBe('STREAM');
      expect(uriSuffix(route.integration.Uri), where).toBe('/response-streaming-invocations');
      expect(route.integration.TimeoutInMillis, where).toBe(900000);
    }
  });

  it('streams the Files and Uploads APIs from a function of their own, any method (a provider’s files pass through it), with rights on files/ only', () => {
    const routes = templateRoutes(template).filter((route) => route.functionName === 'files');
    expect(routes.map((route) => `${route.method} ${route.path}`).sort()).toEqual(
      [
        'ANY /v1/files',
        'ANY /v1/files/{fileId}',
        'ANY /v1/files/{fileId}/content',
        'ANY /v1/uploads',
        'ANY /v1/uploads/{uploadId}/parts',
        'ANY /v1/uploads/{uploadId}/complete',
        'ANY /v1/uploads/{uploadId}/cancel',
      ].sort(),
    );
    for (const route of routes) {
      expect(route.integration.ResponseTransferMode, route.path).toBe('STREAM');
      expect(uriSuffix(route.integration.Uri), route.path).toBe('/response-streaming-invocations');
    }
    const inference = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'];
    const tables = (...names: string[]) => names.flatMap((table) => [table, `${table}/index/*`]);
    expectAllowed('files', 'dynamodb', {
      ...Object.fromEntries(inference.map((a) => [a, tables('ControlTable', 'StateTable')])),
      'dynamodb:BatchWriteItem': ['StateTable'],
      'dynamodb:DeleteItem': ['ControlTable'],
    });
    expectAllowed(
      'files',
      's3',
      Object.fromEntries(['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'].map((a) => [a, ['DataBucket/files/*']])),
    );
    expectAllowed('files', 'kms', { 'kms:Decrypt': ['SecretsKey'] });
  });

  it('buffers the control routes within 29 seconds', () => {
    const routes = templateRoutes(template).filter((route) => CONTROL_FUNCTIONS.includes(route.functionName));
    expect(new Set(routes.map((route) => route.functionName))).toEqual(new Set(CONTROL_FUNCTIONS));
    for (const route of routes) {
      const where = `${route.method} ${route.path}`;
      expect(route.integration.Type, where).toBe('AWS_PROXY');
      expect(route.integration.ResponseTransferMode ?? 'BUFFERED', where).toBe('BUFFERED');
      expect(uriSuffix(route.integration.Uri), where).toBe('/invocations');
      expect(route.integration.TimeoutInMillis ?? 29000, where).toBeLessThanOrEqual(29000);
    }
  });

  it('routes the provider catalog and saved configs to their own functions', () => {
    const routesOf = (name: string) =>
      templateRoutes(template)
        .filter((route) => route.functionName === name)
        .map((route) => `${route.method} ${route.path}`)
        .sort();
    expect(routesOf('providers')).toEqual(
      ['GET /v1/providers', 'POST /v1/providers', 'GET /v1/providers/{slug}', 'PUT /v1/providers/{slug}', 'DELETE /v1/providers/{slug}'].sort(),
    );
    expect(routesOf('configs')).toEqual(
      ['GET /v1/configs', 'POST /v1/configs', 'GET /v1/configs/{configId}', 'PUT /v1/configs/{configId}', 'DELETE /v1/configs/{configId}'].sort(),
    );
  });

  it('runs every function on nodejs22.x, arm64, with JSON logs and the gateway environment', () => {
    for (const [id, fn] of lambdaFunctions()) {
      expect(fn.Properties?.Runtime, id).toBe('nodejs22.x');
      expect(fn.Properties?.Architectures, id).toEqual(['arm64']);
      expect(fn.Properties?.Handler, id).toBe('index.handler');
      expect(fn.Properties?.LoggingConfig?.LogFormat, id).toBe('JSON');
      expect(Object.keys(fn.Properties?.Environment?.Variables ?? {}), id).toEqual(
        expect.arrayContaining([
          'GATEWAY_MODE',
          'GATEWAY_CONTROL_TABLE',
          'GATEWAY_STATE_TABLE',
          'GATEWAY_LOGS_TABLE',
          'GATEWAY_BUCKET',
          'GATEWAY_BATCH_QUEUE_URL',
          'GATEWAY_FINETUNE_QUEUE_URL',
          'GATEWAY_KMS_KEY_ID',
        ]),
      );
    }
  });

  it('gives every function its own role', () => {
    const roles = allFunctions.map((name) => roleOf(name)[0]);
    expect(new Set(roles).size).toBe(allFunctions.length);
  });

  it('lets each role write only to its own function’s log group', () => {
    for (const name of allFunctions) {
      const [, role] = roleOf(name);
      const functionName = template.Resources[lambdaLogicalId(name)].Properties?.FunctionName as string;
      const logStatements = policyStatements(role).filter((statement) => asList(statement.Action).some((action) => action.startsWith('logs:')));
      expect(logStatements.length, name).toBeGreaterThan(0);
      for (const statement of logStatements) {
        for (const resource of asList(statement.Resource)) {
          expect(JSON.stringify(resource), name).toContain(`:log-group:/aws/lambda/${functionName}:`);
        }
      }
    }
  });

  it('grants each function only the data actions it uses', () => {
    const inference = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:BatchGetItem'];
    const tables = (...names: string[]) => names.flatMap((table) => [table, `${table}/index/*`]);
    for (const name of INFERENCE_FUNCTIONS) {
      expectAllowed(name, 'dynamodb', {
        ...Object.fromEntries(inference.map((a) => [a, tables('ControlTable', 'StateTable')])),
        'dynamodb:BatchWriteItem': ['StateTable'],
      });
      expectAllowed(name, 'kms', { 'kms:Decrypt': ['SecretsKey'] });
    }
    expectAllowed(
      'apiKeys',
      'dynamodb',
      Object.fromEntries(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:Query'].map((a) => [a, tables('ControlTable')])),
    );
    // Filtered log pages read records by key; owners' workspace groups list the organisation's
    // workspaces; feedback on a trace is written beside its records.
    expectAllowed('logs', 'dynamodb', {
      'dynamodb:Query': tables('LogsTable', 'ControlTable'),
      'dynamodb:GetItem': tables('LogsTable', 'ControlTable'),
      'dynamodb:BatchGetItem': ['LogsTable'],
      'dynamodb:PutItem': ['LogsTable'],
      'dynamodb:UpdateItem': ['LogsTable'],
    });
    // A record and its rollups are one transaction of a put and updates.
    expectAllowed('logIngest', 'dynamodb', {
      'dynamodb:BatchWriteItem': ['LogsTable'],
      'dynamodb:PutItem': ['LogsTable'],
      'dynamodb:UpdateItem': ['LogsTable'],
    });
    // The provider catalog seals credentials (a new data key per write) and never decrypts them;
    // saved configs are read back (masked) by their route, so it decrypts too.
    expectAllowed(
      'providers',
      'dynamodb',
      Object.fromEntries(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:Query'].map((a) => [a, tables('ControlTable')])),
    );
    expectAllowed('providers', 'kms', { 'kms:GenerateDataKey': ['SecretsKey'] });
    expectAllowed(
      'configs',
      'dynamodb',
      Object.fromEntries(
        [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
          'dynamodb:Query',
          'dynamodb:BatchGetItem',
          'dynamodb:BatchWriteItem',
        ].map((a) => [a, tables('ControlTable')]),
      ),
    );
    expectAllowed('configs', 'kms', { 'kms:GenerateDataKey': ['SecretsKey'], 'kms:Decrypt': ['SecretsKey'] });
    // Prompts hold no credentials: stored in the clear, so their route has no KMS access.
    expectAllowed(
      'prompts',
      'dynamodb',
      Object.fromEntries(
        ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:Query', 'dynamodb:BatchWriteItem'].map((a) => [
          a,
          tables('ControlTable'),
        ]),
      ),
    );
    for (const name of ['apiKeys', 'logs', 'logIngest', 'prompts']) expectAllowed(name, 'kms', {});
  });

  it('lets every function behind a route authenticate: API keys by key, token issuers by query, on the control table', () => {
    // A function that serves public routes only reads no key, so it gets no table at all: the
    // OpenAPI document (a defined route of role "public") and the console's static files.
    const publicRoutes = new Set(definedRoutes.filter((route) => route.role === 'public').map((route) => `${route.method} ${route.path}`));
    const routes = templateRoutes(template);
    const publicOnly = httpFunctions.filter(
      (name) => PUBLIC_FUNCTIONS.includes(name) || routes.every((route) => route.functionName !== name || publicRoutes.has(`${route.method} ${route.path}`)),
    );
    expect(publicOnly.sort()).toEqual(['console', 'openapi']);
    for (const name of publicOnly) expect(allowedActions(policyStatements(roleOf(name)[1]), 'dynamodb').size, name).toBe(0);
    for (const name of httpFunctions.filter((name) => !publicOnly.includes(name))) {
      const [, role] = roleOf(name);
      const actual = allowedActions(policyStatements(role), 'dynamodb');
      expect([...(actual.get('dynamodb:GetItem') ?? [])], `${name} reads API keys`).toContain('ControlTable');
      expect([...(actual.get('dynamodb:Query') ?? [])], `${name} finds a token's identity provider`).toContain('ControlTable');
    }
  });

  it('has no IAM Allow statement on Resource "*" or with a service:* action', () => {
    const iamResources = Object.entries(template.Resources).filter(([, resource]) => IAM_TYPES.has(resource.Type));
    expect(iamResources.length).toBeGreaterThanOrEqual(allFunctions.length);
    const violations = iamResources.flatMap(([id, resource]) =>
      policyStatements(resource)
        .map((statement) => broadAllowReason(statement))
        .filter((reason): reason is string => reason !== null)
        .map((reason) => `${id}: ${reason}`),
    );
    expect(violations).toEqual([]);
  });

  it('the broad-statement check catches what it should', () => {
    expect(broadAllowReason({ Effect: 'Allow', Action: 'logs:PutLogEvents', Resource: '*' })).toBe('Resource "*"');
    expect(broadAllowReason({ Effect: 'Allow', Action: ['dynamodb:GetItem'], Resource: ['arn:x', '*'] })).toBe('Resource "*"');
    expect(broadAllowReason({ Effect: 'Allow', Action: ['dynamodb:*'], Resource: 'arn:x' })).toBe('action dynamodb:*');
    expect(broadAllowReason({ Effect: 'Allow', Action: 'execute-api:*', Resource: 'arn:x' })).toBe('action execute-api:*');
    expect(broadAllowReason({ Effect: 'Deny', Action: '*', Resource: '*' })).toBeNull();
    expect(broadAllowReason({ Effect: 'Allow', Action: 'kms:Decrypt', Resource: { 'Fn::GetAtt': ['K', 'Arn'] } })).toBeNull();
  });

  it('serves a REGIONAL REST API that takes every body as binary', () => {
    const apis = resourcesOfType(template, 'AWS::ApiGateway::RestApi');
    expect(apis.map(([id]) => id)).toEqual(['ApiGatewayRestApi']);
    const [[, api]] = apis;
    expect(api.Properties?.EndpointConfiguration?.Types).toEqual(['REGIONAL']);
    expect(api.Properties?.BinaryMediaTypes).toEqual(['*/*']);
  });

  it('subscribes logIngest to the request-log lines of every HTTP function', () => {
    const ingestId = lambdaLogicalId('logIngest');
    const filters = resourcesOfType(template, 'AWS::Logs::SubscriptionFilter');
    const ingestGroup = logGroupLogicalId('logIngest');
    expect(filters.filter(([, filter]) => refOf(filter.Properties?.LogGroupName) === ingestGroup)).toEqual([]);

    for (const name of httpFunctions) {
      const groupId = logGroupLogicalId(name);
      const matching = filters.filter(([, filter]) => refOf(filter.Properties?.LogGroupName) === groupId);
      expect(matching.length, `request-log subscriptions of ${name} (on ${groupId})`).toBe(1);
      const [[filterId, filter]] = matching;
      expect(filter.Properties?.FilterPattern, filterId).toBe(REQUEST_LOG_FILTER);
      expect(getAttTargets(filter.Properties?.DestinationArn), filterId).toEqual([ingestId]);

      // The Ref to the log group is a dependency of its own; nothing in the filter refers to the
      // permission, so that one must be declared.
      const permissions = dependsOn(filter)
        .map((dep) => template.Resources[dep])
        .filter((resource) => resource?.Type === 'AWS::Lambda::Permission');
      expect(permissions.length, `${filterId} depends on the Lambda permission`).toBe(1);
      const [permission] = permissions;
      expect(permission.Properties?.Principal).toBe('logs.amazonaws.com');
      expect(permission.Properties?.Action).toBe('lambda:InvokeFunction');
      expect(getAttTargets(permission.Properties?.FunctionName)).toEqual([ingestId]);
    }
  });

  it('turns API Gateway’s own errors into our JSON error body', () => {
    const responses = new Map(
      resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse').map(([, response]) => [response.Properties?.ResponseType as string, response]),
    );
    const missing = responses.get('MISSING_AUTHENTICATION_TOKEN');
    expect(missing, 'MISSING_AUTHENTICATION_TOKEN gateway response').toBeDefined();
    expect(missing?.Properties?.StatusCode).toBe('404');
    expect(refOf(missing?.Properties?.RestApiId)).toBe('ApiGatewayRestApi');
    expect(renderGatewayTemplate(missing?.Properties?.ResponseTemplates?.['application/json'])).toEqual({
      error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'route_not_found' },
    });

    for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX']) {
      const response = responses.get(type);
      expect(response, `${type} gateway response`).toBeDefined();
      expect(refOf(response?.Properties?.RestApiId)).toBe('ApiGatewayRestApi');
      const body = response?.Properties?.ResponseTemplates?.['application/json'] as string;
      expect(body).toContain('$context.error.messageString');
      expect(renderGatewayTemplate(body)).toEqual({
        error: { message: 'Something happened', type: expect.any(String), param: null, code: expect.any(String) },
      });
    }

    // Gateway responses only take effect in a deployment created after them.
    const deployments = resourcesOfType(template, 'AWS::ApiGateway::Deployment');
    expect(deployments.length).toBe(1);
    const before = new Set<string>();
    const pending = dependsOn(deployments[0][1]);
    while (pending.length > 0) {
      const id = pending.pop() as string;
      if (before.has(id)) continue;
      before.add(id);
      if (template.Resources[id]) pending.push(...dependsOn(template.Resources[id]));
    }
    for (const [id] of resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse')) {
      expect(before.has(id), `the API deployment waits for ${id}`).toBe(true);
    }
  });
});
