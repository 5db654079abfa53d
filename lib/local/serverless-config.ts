/**
 * Reads `serverless.yml` for the local runtime: functions, HTTP routes, provider environment and
 * CloudFormation resources.
 *
 * YAML: CloudFormation short-form tags (`!Ref`, `!GetAtt`, `!Sub`, `!Join`, `!Select`, `!Split`, `!If`,
 * `!Equals`, `!Not`, `!And`, `!Or`, `!FindInMap`, `!ImportValue`, `!Base64`, `!GetAZs`, `!Cidr`,
 * `!Condition`) become their long-form objects (`{ Ref: 'X' }`, `{ 'Fn::GetAtt': ['X', 'Arn'] }`, ...).
 * Anchors, aliases and `<<` merge keys work as in the framework.
 *
 * Variables (the documented subset; anything else is an error naming the variable):
 *   ${self:<path>}                 another value of this file (itself resolved)
 *   ${sls:stage}                   the stage given in the options
 *   ${opt:stage}, ${opt:region}    the options given (`${opt:<name>}` for any other name is unset)
 *   ${aws:region}                  options.region, else provider.region, else us-east-1
 *   ${aws:accountId}               000000000000 (the local account)
 *   ${env:NAME}                    process.env.NAME
 * with fallbacks `${opt:stage, 'dev'}` (quoted strings, numbers, true/false/null or another variable,
 * tried left to right when a source has no value) and variables nested in addresses
 * (`${self:custom.${sls:stage}.x}`). As in the framework, `${...}` whose content does not start with
 * `<lowercase type>:` or `<lowercase type>(` (for example `${AWS::Region}` or `${MyTable.Arn}` inside
 * `!Sub`) is not a variable and is left for CloudFormation; `\${` escapes a variable.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  Pair,
  Scalar,
  YAMLMap,
  parseDocument,
  type CollectionTag,
  type ScalarTag,
  type YAMLSeq,
} from 'yaml';

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

export const LOCAL_ACCOUNT_ID = '000000000000';
const DEFAULT_REGION = 'us-east-1';
const DEFAULT_INTEGRATION_TIMEOUT_MS = 29_000;
/** The framework's defaults for functions that do not set them. */
const DEFAULT_TIMEOUT_SECONDS = 6;
const DEFAULT_MEMORY_SIZE = 1024;

// ---------------------------------------------------------------------------------------------
// YAML with CloudFormation tags

/** Short-form tag → long-form key. `!Ref` and `!Condition` are scalar-only; `!GetAtt` is special. */
const FN_TAGS: Record<string, string> = {
  Sub: 'Fn::Sub',
  Join: 'Fn::Join',
  Select: 'Fn::Select',
  Split: 'Fn::Split',
  If: 'Fn::If',
  Equals: 'Fn::Equals',
  Not: 'Fn::Not',
  And: 'Fn::And',
  Or: 'Fn::Or',
  FindInMap: 'Fn::FindInMap',
  ImportValue: 'Fn::ImportValue',
  Base64: 'Fn::Base64',
  GetAZs: 'Fn::GetAZs',
  Cidr: 'Fn::Cidr',
  GetAtt: 'Fn::GetAtt',
};

/** Wraps a parsed collection node in a one-key map node, so aliases inside it still resolve. */
function wrapCollection(key: string) {
  return (collection: YAMLMap.Parsed | YAMLSeq.Parsed) => {
    const wrapper = new YAMLMap();
    wrapper.items.push(new Pair(new Scalar(key), collection));
    return wrapper;
  };
}

function splitGetAtt(value: string, onError: (message: string) => void): [string, string] | string {
  const dot = value.indexOf('.');
  if (dot <= 0 || dot === value.length - 1) {
    onError(`!GetAtt expects "LogicalId.Attribute", got "${value}"`);
    return value;
  }
  return [value.slice(0, dot), value.slice(dot + 1)];
}

export const cloudFormationTags: Array<ScalarTag | CollectionTag> = (() => {
  const tags: Array<ScalarTag | CollectionTag> = [
    { tag: '!Ref', resolve: (value: string) => ({ Ref: value }) },
    { tag: '!Condition', resolve: (value: string) => ({ Condition: value }) },
  ];
  for (const [short, long] of Object.entries(FN_TAGS)) {
    const tag = `!${short}`;
    if (short === 'GetAtt') {
      tags.push({ tag, resolve: (value, onError) => ({ [long]: splitGetAtt(value, onError) }) });
    } else {
      tags.push({ tag, resolve: (value: string) => ({ [long]: value }) });
    }
    tags.push({ tag, collection: 'seq', resolve: wrapCollection(long) });
    tags.push({ tag, collection: 'map', resolve: wrapCollection(long) });
  }
  return tags;
})();

/** Parses serverless.yml text into plain JS with CloudFormation intrinsics in long form. */
export function parseServerlessYaml(text: string, fileName = 'serverless.yml'): Record<string, unknown> {
  const doc = parseDocument(text, { customTags: cloudFormationTags, merge: true, prettyErrors: true });
  // An unknown tag is only a warning for the yaml package; the framework refuses it, so do we.
  const problems = [...doc.errors, ...doc.warnings.filter((warning) => warning.code === 'TAG_RESOLVE_FAILED')];
  if (problems.length > 0) {
    throw new Error(`${fileName}: ${problems.map((problem) => problem.message).join('\n')}`);
  }
  const value = doc.toJS({ maxAliasCount: -1 }) as unknown;
  if (!isPlainObject(value)) throw new Error(`${fileName}: expected a mapping at the top level`);
  return value;
}

// ---------------------------------------------------------------------------------------------
// ${...} variables

interface VariableOptions {
  stage: string;
  region: string;
  options: Record<string, string | undefined>;
  env: NodeJS.ProcessEnv;
}

type Source =
  | { kind: 'literal'; value: unknown }
  | { kind: 'variable'; type: string; address: string; text: string }
  | { kind: 'nested'; expression: string };

class VariableResolver {
  private readonly resolving = new Set<string>();
  private readonly cache = new Map<string, unknown>();

  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly vars: VariableOptions,
    private readonly fileName: string,
  ) {}

  /** Resolves every variable in `value` (deeply). `where` names the property path for errors. */
  resolveValue(value: unknown, where: string): unknown {
    if (typeof value === 'string') return this.resolveString(value, where);
    if (Array.isArray(value)) return value.map((item, index) => this.resolveValue(item, `${where}[${index}]`));
    if (isPlainObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[key] = this.resolveValue(item, join(where, key));
      return out;
    }
    return value;
  }

  /** The resolved value at a dotted path of the file (`provider.stage`). */
  resolvePath(dottedPath: string): unknown {
    if (this.cache.has(dottedPath)) return this.cache.get(dottedPath);
    if (this.resolving.has(dottedPath)) {
      throw new Error(`${this.fileName}: circular variable reference through "${dottedPath}"`);
    }
    this.resolving.add(dottedPath);
    try {
      let current: unknown = this.raw;
      const walked: string[] = [];
      for (const segment of dottedPath.split('.').filter(Boolean)) {
        // Resolve as we walk, so a variable that yields an object can be indexed into.
        current = this.resolveShallow(current, walked.join('.'));
        if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
        else if (isPlainObject(current)) current = current[segment];
        else current = undefined;
        walked.push(segment);
        if (current === undefined) break;
      }
      const resolved = current === undefined ? undefined : this.resolveValue(current, dottedPath);
      this.cache.set(dottedPath, resolved);
      return resolved;
    } finally {
      this.resolving.delete(dottedPath);
    }
  }

  private resolveShallow(value: unknown, where: string): unknown {
    return typeof value === 'string' ? this.resolveString(value, where) : value;
  }

  private resolveString(text: string, where: string): unknown {
    const parts = scanVariables(text);
    if (parts.length === 1 && parts[0].kind === 'variable') {
      // The whole string is one variable: its value keeps its type (object, number, ...).
      return this.evaluate(parts[0].expression, where);
    }
    if (!parts.some((part) => part.kind === 'variable')) {
      return parts.map((part) => part.text).join('');
    }
    return parts
      .map((part) => {
        if (part.kind === 'text') return part.text;
        const value = this.evaluate(part.expression, where);
        if (value === null || typeof value === 'object') {
          throw new Error(
            `${this.fileName}: variable \${${part.expression}} at "${where}" resolves to a non-scalar value and cannot be embedded in a string`,
          );
        }
        return String(value);
      })
      .join('');
  }

  /** Evaluates the inside of `${...}`: the first source with a value wins. */
  private evaluate(expression: string, where: string): unknown {
    const sources = splitSources(expression).map((source) => parseSource(source, expression, this.fileName));
    for (const source of sources) {
      const value = this.evaluateSource(source, where);
      if (value !== undefined && value !== null) return value;
    }
    throw new Error(
      `${this.fileName}: cannot resolve variable \${${expression}} at "${where}"` +
        (sources.length > 1 ? ' (no source or fallback has a value)' : ' (it has no value and no fallback)'),
    );
  }

  private evaluateSource(source: Source, where: string): unknown {
    if (source.kind === 'literal') return source.value;
    if (source.kind === 'nested') return this.evaluate(source.expression, where);
    const address = String(this.resolveString(source.address, where));
    switch (source.type) {
      case 'self':
        return this.resolvePath(address);
      case 'sls':
        if (address === 'stage') return this.vars.stage;
        break;
      case 'opt':
        return this.vars.options[address];
      case 'aws':
        if (address === 'region') return this.vars.region;
        if (address === 'accountId') return LOCAL_ACCOUNT_ID;
        break;
      case 'env':
        return this.vars.env[address];
      default:
        break;
    }
    throw new Error(
      `${this.fileName}: unsupported variable \${${source.text}} at "${where}"; the local runtime resolves ` +
        '${self:...}, ${sls:stage}, ${opt:...}, ${aws:region}, ${aws:accountId} and ${env:...}',
    );
  }
}

type Part = { kind: 'text'; text: string } | { kind: 'variable'; expression: string; text: string };

/** Splits a string into literal text and top-level `${type:...}` variables (see the header). */
function scanVariables(text: string): Part[] {
  const parts: Part[] = [];
  let buffer = '';
  let index = 0;
  while (index < text.length) {
    if (text[index] === '\\' && text.startsWith('${', index + 1)) {
      buffer += '${';
      index += 3;
      continue;
    }
    if (text.startsWith('${', index) && /^[a-z][a-zA-Z0-9]*(?::(?!:)|\()/.test(text.slice(index + 2))) {
      const end = findClosingBrace(text, index + 2);
      if (end < 0) throw new Error(`Unterminated variable in "${text}"`);
      if (buffer) parts.push({ kind: 'text', text: buffer });
      buffer = '';
      parts.push({ kind: 'variable', expression: text.slice(index + 2, end), text: text.slice(index, end + 1) });
      index = end + 1;
      continue;
    }
    buffer += text[index];
    index += 1;
  }
  if (buffer || parts.length === 0) parts.push({ kind: 'text', text: buffer });
  return parts;
}

/** Index of the `}` closing a variable whose content starts at `start`, skipping nested `${}` and quotes. */
function findClosingBrace(text: string, start: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (quote) {
      if (char === quote) quote = null;
      continue;
    }
    if (char === "'" || char === '"') quote = char;
    else if (char === '$' && text[index + 1] === '{') {
      depth += 1;
      index += 1;
    } else if (char === '}') {
      if (depth === 0) return index;
      depth -= 1;
    }
  }
  return -1;
}

/** Splits `opt:stage, ${env:X}, 'dev'` at top-level commas. */
function splitSources(expression: string): string[] {
  const sources: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let index = 0; index < expression.length; index += 1) {
    const char = expression[index];
    if (quote) {
      if (char === quote) quote = null;
      continue;
    }
    if (char === "'" || char === '"') quote = char;
    else if (char === '$' && expression[index + 1] === '{') {
      depth += 1;
      index += 1;
    } else if (char === '}') depth -= 1;
    else if (char === ',' && depth === 0) {
      sources.push(expression.slice(start, index));
      start = index + 1;
    }
  }
  sources.push(expression.slice(start));
  return sources.map((source) => source.trim());
}

function parseSource(source: string, expression: string, fileName: string): Source {
  if (source === '') throw new Error(`${fileName}: empty source in variable \${${expression}}`);
  if (source.startsWith('${') && source.endsWith('}') && findClosingBrace(source, 2) === source.length - 1) {
    return { kind: 'nested', expression: source.slice(2, -1) };
  }
  if ((source.startsWith("'") && source.endsWith("'")) || (source.startsWith('"') && source.endsWith('"'))) {
    return { kind: 'literal', value: source.slice(1, -1) };
  }
  // Sources with parameters (`file(...)`, `cf(...)`, ...) are not in the local subset.
  const withParams = /^([a-z][a-zA-Z0-9]*)\(/.exec(source);
  if (withParams) return { kind: 'variable', type: `${withParams[1]}()`, address: '', text: source };
  const typed = /^([a-z][a-zA-Z0-9]*):(.*)$/s.exec(source);
  if (typed) return { kind: 'variable', type: typed[1], address: typed[2].trim(), text: source };
  if (source === 'true') return { kind: 'literal', value: true };
  if (source === 'false') return { kind: 'literal', value: false };
  if (source === 'null') return { kind: 'literal', value: null };
  if (source !== '' && !Number.isNaN(Number(source))) return { kind: 'literal', value: Number(source) };
  throw new Error(`${fileName}: cannot parse source "${source}" in variable \${${expression}}`);
}

// ---------------------------------------------------------------------------------------------
// The config

const METHODS = new Set<ServerlessRoute['method']>(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'ANY']);

export function loadServerlessConfig(options: { file?: string; stage: string; region?: string }): ServerlessConfig {
  const file = options.file ?? path.join(process.cwd(), 'serverless.yml');
  const fileName = path.basename(file);
  const raw = parseServerlessYaml(readFileSync(file, 'utf8'), fileName);

  // The region may itself be a variable (`${opt:region, 'us-east-1'}`): resolve it with a resolver
  // that answers ${aws:region} from the options only.
  const optionValues = { stage: options.stage, region: options.region };
  const bootstrap = new VariableResolver(
    raw,
    { stage: options.stage, region: options.region ?? DEFAULT_REGION, options: optionValues, env: process.env },
    fileName,
  );
  const providerRegion = options.region ?? bootstrap.resolvePath('provider.region');
  const region = typeof providerRegion === 'string' && providerRegion ? providerRegion : DEFAULT_REGION;
  const resolver = new VariableResolver(
    raw,
    { stage: options.stage, region, options: optionValues, env: process.env },
    fileName,
  );

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

function httpRoutes(
  functionName: string,
  definition: Record<string, unknown>,
  defaultIntegrationTimeout: number,
  fileName: string,
): ServerlessRoute[] {
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

function normaliseRoutePath(routePath: string): string {
  const trimmed = routePath.trim().replace(/^\/+/, '').replace(/\/+$/, '');
  return `/${trimmed}`;
}

function normaliseRelative(file: string): string {
  return path.posix.normalize(file.replace(/\\/g, '/')).replace(/^\.\//, '');
}

// ---------------------------------------------------------------------------------------------
// CloudFormation intrinsics

const DEFAULT_PSEUDO: Record<string, string> = {
  'AWS::Partition': 'aws',
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::AccountId': LOCAL_ACCOUNT_ID,
};

/**
 * Resolves Ref, Fn::GetAtt, Fn::Sub (`${Res}`, `${Res.Attr}`, `${AWS::Region}`, `${!Literal}` and the
 * variable map form), Fn::Join, Fn::Select and Fn::Split, recursively, into strings (Fn::Split into
 * a list). Other intrinsics (Fn::If, ...) are kept, with their arguments resolved. Pseudo parameters
 * come from `resolver.pseudo`; AWS::Partition, AWS::URLSuffix and AWS::AccountId have local defaults.
 */
export function resolveIntrinsics(
  value: unknown,
  resolver: { ref(logicalId: string): string; getAtt(logicalId: string, attribute: string): string; pseudo?: Record<string, string> },
): unknown {
  const pseudo = { ...DEFAULT_PSEUDO, ...(resolver.pseudo ?? {}) };

  const ref = (name: unknown): string => {
    if (typeof name !== 'string') throw new Error(`Ref expects a logical id, got ${JSON.stringify(name)}`);
    if (name.startsWith('AWS::')) {
      const pseudoValue = pseudo[name];
      if (pseudoValue === undefined) throw new Error(`No value for the pseudo parameter ${name}`);
      return pseudoValue;
    }
    return resolver.ref(name);
  };

  const str = (input: unknown, what: string): string => {
    const resolved = walk(input);
    if (typeof resolved === 'string') return resolved;
    if (typeof resolved === 'number' || typeof resolved === 'boolean') return String(resolved);
    throw new Error(`${what} expects a string, got ${JSON.stringify(resolved)}`);
  };

  const list = (input: unknown, what: string): unknown[] => {
    const resolved = walk(input);
    if (!Array.isArray(resolved)) throw new Error(`${what} expects a list, got ${JSON.stringify(resolved)}`);
    return resolved;
  };

  const sub = (template: string, variables: Record<string, unknown>): string =>
    template.replace(/\$\{([^}]*)\}/g, (whole, inner: string) => {
      const name = inner.trim();
      if (name.startsWith('!')) return `\${${name.slice(1)}}`;
      if (Object.hasOwn(variables, name)) return str(variables[name], `Fn::Sub variable ${name}`);
      if (name.startsWith('AWS::')) return ref(name);
      const dot = name.indexOf('.');
      if (dot > 0) return resolver.getAtt(name.slice(0, dot), name.slice(dot + 1));
      if (name) return resolver.ref(name);
      return whole;
    });

  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!isPlainObject(node)) return node;
    const keys = Object.keys(node);
    if (keys.length === 1) {
      const [key] = keys;
      const arg = node[key];
      switch (key) {
        case 'Ref':
          return ref(walk(arg));
        case 'Fn::GetAtt': {
          const parts = typeof arg === 'string' ? splitAttribute(arg) : list(arg, 'Fn::GetAtt');
          if (parts.length !== 2) throw new Error(`Fn::GetAtt expects [LogicalId, Attribute], got ${JSON.stringify(arg)}`);
          return resolver.getAtt(str(parts[0], 'Fn::GetAtt'), str(parts[1], 'Fn::GetAtt'));
        }
        case 'Fn::Sub': {
          if (typeof arg === 'string') return sub(arg, {});
          const [template, variables] = list(arg, 'Fn::Sub');
          if (typeof template !== 'string') throw new Error('Fn::Sub expects a template string');
          return sub(template, isPlainObject(variables) ? variables : {});
        }
        case 'Fn::Join': {
          const [delimiter, items] = list(arg, 'Fn::Join');
          return list(items, 'Fn::Join').map((item) => str(item, 'Fn::Join')).join(str(delimiter, 'Fn::Join'));
        }
        case 'Fn::Select': {
          const [index, items] = list(arg, 'Fn::Select');
          const position = Number(walk(index));
          const selected = list(items, 'Fn::Select');
          if (!Number.isInteger(position) || position < 0 || position >= selected.length) {
            throw new Error(`Fn::Select index ${String(index)} is out of range`);
          }
          return selected[position];
        }
        case 'Fn::Split': {
          const [delimiter, source] = list(arg, 'Fn::Split');
          return str(source, 'Fn::Split').split(str(delimiter, 'Fn::Split'));
        }
        default:
          break;
      }
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(node)) out[key] = walk(item);
    return out;
  };

  return walk(value);
}

function splitAttribute(value: string): string[] {
  const dot = value.indexOf('.');
  return dot > 0 ? [value.slice(0, dot), value.slice(dot + 1)] : [value];
}

// ---------------------------------------------------------------------------------------------

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asObject(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}

function numberOr(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return fallback;
}

function join(where: string, key: string): string {
  return where ? `${where}.${key}` : key;
}
