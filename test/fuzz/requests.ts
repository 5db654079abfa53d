/**
 * Generators of hostile requests for the gateway fuzz test, one small named arbitrary per idea.
 *
 * A generated request is plain data (method, request target, ordered headers, a body plan) with
 * placeholders such as `{{admin}}` or `{{fake}}` for what only exists at run time (keys, the fake
 * upstream's address, the ids created during setup), so a seed and path replay the same request
 * against a fresh gateway. `resolve` fills the placeholders in; `describeRequest` prints a request.
 *
 * Nothing here names a real host: every URL a request may make the gateway call is the loopback
 * fake (`{{fake}}`), a loopback port that refuses connections (`{{refused}}`), or not a URL at all.
 */
import fc from 'fast-check';
import { providerNames } from '../../lib/providers/registry';
import { doublingSchema, nestedArrays, recursiveTwice } from '../support/pathological-checks';
import { allFaults, faultHeader, isStallFault, type Fault } from './fuzz-upstream';

// ---------------------------------------------------------------------------------------------
// The request model

/** Route families, counted separately so no family can go untested. */
export const families = [
  'chat',
  'completions',
  'embeddings',
  'responses',
  'passthrough',
  'configs',
  'providers',
  'api-keys',
  'logs',
  'log-trace',
  'unknown-route',
  'raw-target',
  'stored-secrets',
  'durations',
  'prompts',
  'guardrail-checks',
] as const;
export type Family = (typeof families)[number];

/** The families served by the unified inference routes (OpenAI-format answers). */
export const unifiedFamilies: ReadonlySet<Family> = new Set(['chat', 'completions', 'embeddings']);

export type BodyPlan =
  | { kind: 'none' }
  | { kind: 'text'; text: string }
  /** `prefix + fill × times + suffix`, built only when sent (large bodies stay small in reports). */
  | { kind: 'repeat'; prefix: string; fill: string; times: number; suffix: string };

export interface FuzzRequest {
  family: Family;
  method: string;
  /** Path and query exactly as sent; may hold raw latin1 characters (sent as single bytes). */
  target: string;
  /** In order; names may repeat. */
  headers: Array<[string, string]>;
  body: BodyPlan;
  /** The most provider attempts the request can cause when a provider stalls (for its deadline). */
  stallAttempts: number;
  /** Why the gateway must refuse this request (any 4xx), when it must. */
  mustRefuse?: string;
  /** A deadline tighter than the usual one, for requests whose work must stay bounded. */
  deadlineMs?: number;
}

/** Placeholder values known once the gateway, the fake and the setup records exist. */
export interface Placeholders {
  admin: string;
  member: string;
  fake: string;
  refused: string;
  tokenUri: string;
  privateKey: string;
  savedConfig: string;
  scratchConfig: string;
  spareKeyId: string;
  /** A saved config whose stored key belongs to `{{fake}}/home/v1` (provider named). */
  homeConfig: string;
  /** A saved config whose stored key names no provider, as older versions could save one. */
  legacyConfig: string;
  /** A saved fallback config whose stored keys an edit may try to move. */
  movableConfig: string;
  /** A saved guardrail whose webhook stores a secret header. */
  webhookGuardrail: string;
  /** A prompt over partials that double their text ten levels deep (fz_d9 … fz_d0 = {{v}}). */
  doublingPrompt: string;
  /** A prompt that prints a variable and a section over a list. */
  plainPrompt: string;
}

export function resolve(text: string, values: Placeholders): string {
  return text.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => (name in values ? String(values[name as keyof Placeholders]) : whole));
}

export function bodyBytes(body: BodyPlan, values: Placeholders): Buffer | undefined {
  switch (body.kind) {
    case 'none':
      return undefined;
    case 'text':
      return Buffer.from(resolve(body.text, values), 'utf8');
    case 'repeat':
      return Buffer.from(resolve(body.prefix, values) + body.fill.repeat(body.times) + resolve(body.suffix, values), 'utf8');
  }
}

/** Everything in a request a fault hint or a placeholder can hide in, as one text. */
export function requestText(request: FuzzRequest): string {
  const body = request.body.kind === 'text' ? request.body.text : request.body.kind === 'repeat' ? request.body.prefix + request.body.suffix : '';
  return [request.target, ...request.headers.map(([name, value]) => `${name}: ${value}`), body].join('\n');
}

const faultMention = new RegExp(
  `(?:fuzz-fault-|/fault/|${faultHeader}: )(${allFaults.map((fault) => fault.replace(/-/g, '\\-')).join('|')})(?![a-z0-9-])`,
  'g',
);

/** Every fault the request asks of the fake upstream, wherever it is written. */
export function faultsOf(request: FuzzRequest): Fault[] {
  const found = new Set<Fault>();
  for (const match of requestText(request).matchAll(faultMention)) found.add(match[1] as Fault);
  return [...found];
}

/** The request's `x-gateway-request-timeout`, when it is one valid value. */
export function requestTimeoutOf(request: FuzzRequest): number | undefined {
  const values = request.headers.filter(([name]) => name.toLowerCase() === 'x-gateway-request-timeout').map(([, value]) => value.trim());
  if (values.length !== 1 || !/^\d+$/.test(values[0])) return undefined;
  return Number(values[0]);
}

/**
 * The request for a failure report, as JSON string contents: in the target and header values (sent
 * as latin1 bytes) a byte above 0x7f shows as `\xHH`; a run of 32 or more equal characters shows as
 * `‹c×n›`.
 */
export function describeRequest(request: FuzzRequest): string {
  const show = (text: string, limit: number, bytes = false) => {
    let shown = JSON.stringify(text).slice(1, -1);
    if (bytes) shown = shown.replace(/[\x80-\xff]/g, (char) => `\\x${char.charCodeAt(0).toString(16).toUpperCase()}`);
    shown = shown.replace(/(.)\1{31,}/g, (run, char: string) => `‹${char}×${run.length}›`);
    return shown.length > limit ? `${shown.slice(0, limit)}… (${text.length} characters)` : shown;
  };
  const lines = [`${request.method} ${show(request.target, 2_000, true)}`];
  for (const [name, value] of request.headers) lines.push(`${name}: ${show(value, 2_000, true)}`);
  const body = request.body;
  if (body.kind === 'text') lines.push('', show(body.text, 4_000));
  else if (body.kind === 'repeat')
    lines.push('', `${JSON.stringify(body.prefix)} + ${JSON.stringify(body.fill)} × ${body.times} + ${JSON.stringify(body.suffix)}`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Small pieces

const prototypeNames = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupSetter__',
] as const;
const prototypeName = fc.constantFrom(...prototypeNames);

const printable = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code));
const highLatin1 = fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code));
/** A character node:http will put in a header value: printable ASCII, tab, or an obs-text byte. */
const headerChar = fc.oneof({ weight: 12, arbitrary: printable }, { weight: 1, arbitrary: highLatin1 }, { weight: 1, arbitrary: fc.constant('\t') });
const shortText = fc.string({ unit: printable, maxLength: 24 });
const anyText = fc.string({ maxLength: 24, unit: 'binary' });
const headerText = fc.string({ unit: headerChar, maxLength: 48 });
const tokenChar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789-_!#$%&'*+.^`|~".split(''));
const token = fc.string({ unit: tokenChar, minLength: 1, maxLength: 16 });
/** Long header values: up to API Gateway's 10,240-byte budget, just above it, and above Node's own 16 KB limit. */
const longHeaderValue = fc
  .oneof(
    { weight: 6, arbitrary: fc.integer({ min: 257, max: 4_000 }) },
    { weight: 2, arbitrary: fc.integer({ min: 10_300, max: 12_000 }) },
    { weight: 1, arbitrary: fc.integer({ min: 16_500, max: 20_000 }) },
  )
  .chain((length) => fc.constantFrom('x', 'é', '{', '%').map((fill) => fill.repeat(length)));

const providerName = fc.constantFrom(...providerNames);
const oddProviderName = fc.oneof(
  fc.constantFrom(
    'OpenAI',
    'ANTHROPIC',
    ' openai ',
    'open ai',
    'openai\t',
    '@',
    '@@',
    '@missing-slug',
    '@fuzz-openai',
    '@FUZZ-OPENAI',
    '',
    'azure',
    'vertex',
    'aws',
    'x-ai/..',
    '../openai',
    'openai%00',
  ),
  prototypeName,
  prototypeName.map((name) => `@${name}`),
  headerText,
);

const faultArb = fc.constantFrom(...allFaults);
const nonStallFault = faultArb.filter((fault) => !isStallFault(fault));
const stallFault = fc.constantFrom<Fault>('stall-before', 'stall-headers', 'stall-error');

const modelName = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom(
      'gpt-4o-mini',
      'claude-3-5-haiku-latest',
      'gemini-2.0-flash',
      'anthropic.claude-3-haiku-20240307-v1:0',
      'amazon.titan-embed-text-v2:0',
      'cohere.embed-english-v3',
      'command-r-plus',
      'text-embedding-3-small',
      'claude-sonnet-4@20250514',
      'google.gemini-2.5-pro',
      'mistral-large-latest',
      'gpt-3.5-turbo-instruct',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '..',
      '.',
      '../..',
      '%2e%2e',
      'a/b',
      'a?b=c',
      'a#b',
      'model with spaces',
      'ü',
      '\u0000',
      'arn:aws:bedrock:us-east-1:1:inference-profile/x',
      '@',
      'x'.repeat(3000),
    ),
  },
  { weight: 1, arbitrary: prototypeName },
  { weight: 1, arbitrary: anyText },
);

/** Builds an object whose keys may be `__proto__` (as an own, serialised property). */
function objectOf(entries: Array<[string, unknown]>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

const jsonKey = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 2, arbitrary: prototypeName },
  {
    weight: 1,
    arbitrary: fc.constantFrom('$and', '$or', '$regex', '$where', 'model', 'messages', 'stream', 'provider', 'targets', 'strategy', 'role', 'content', 'type'),
  },
);
const jsonLeaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 12 }),
  fc.constantFrom(1e308, -0, 2 ** 53 + 1),
);
/** Any small JSON value, with prototype keys among its object keys. */
const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, jsonLeaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.array(fc.tuple(jsonKey, tie('value')), { maxLength: 4 }).map(objectOf),
})).value;

/** JSON text nested `depth` deep, around an optional core. */
const deepJson = fc.record({ depth: fc.integer({ min: 40, max: 400 }), kind: fc.constantFrom('array', 'object', 'mixed') }).map(({ depth, kind }) => {
  const open = kind === 'array' ? '[' : kind === 'object' ? '{"a":' : '[{"a":';
  const close = kind === 'array' ? ']' : kind === 'object' ? '}' : '}]';
  const levels = kind === 'mixed' ? Math.ceil(depth / 2) : depth;
  return open.repeat(levels) + '1' + close.repeat(levels);
});

const invalidJson = fc.constantFrom(
  '{',
  '{"model":',
  '{"model":"gpt-4o-mini",}',
  "{'model':'x'}",
  'nul',
  'NaN',
  '[]',
  '"text"',
  '1e999',
  '\uFEFF{"model":"x"}',
  '{"a":1}{"b":2}',
  '{"\\ud800":1}',
  '\u0000',
  '{"model":"x","messages":[{"role":"user","content":"hi"}]',
  '{"__proto__":',
  ' ',
);

/** JSON for a header value: characters above latin1 escaped, as node:http sends only latin1. */
export function headerJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0100-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A body is JSON of `value`, with every `{{…}}` placeholder left for `resolve`. */
const jsonBody = (value: unknown): BodyPlan => ({ kind: 'text', text: JSON.stringify(value) });

const contentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant('application/json') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/vnd.api+json',
      'application/jsonl',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/json; charset=latin1',
      '*/*',
      '',
    ),
  },
  { weight: 1, arbitrary: headerText },
);

// ---------------------------------------------------------------------------------------------
// Keys

export const keyKinds = ['admin', 'member', 'missing', 'garbage'] as const;
export type KeyKind = (typeof keyKinds)[number];

/** The gateway key headers of a request, and whether they name a valid key. */
const gatewayKey = fc.oneof(
  { weight: 14, arbitrary: fc.constant<[KeyKind, Array<[string, string]>]>(['admin', [['x-gateway-api-key', '{{admin}}']]]) },
  { weight: 4, arbitrary: fc.constant<[KeyKind, Array<[string, string]>]>(['member', [['x-gateway-api-key', '{{member}}']]]) },
  { weight: 1, arbitrary: fc.constant<[KeyKind, Array<[string, string]>]>(['admin', [['X-Gateway-Api-Key', '{{admin}}']]]) },
  { weight: 2, arbitrary: fc.constant<[KeyKind, Array<[string, string]>]>(['missing', []]) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        headerText,
        fc.constantFrom('', 'gwk_', 'Bearer {{admin}}', '{{admin}}x', ' {{admin}}x', 'gwk_' + 'A'.repeat(43), '{{member}}{{member}}', 'null', 'undefined'),
        fc.integer({ min: 257, max: 5_000 }).map((length) => 'gwk_' + 'k'.repeat(length)),
        prototypeName,
      )
      .map((value): [KeyKind, Array<[string, string]>] => ['garbage', [['x-gateway-api-key', value]]]),
  },
  { weight: 1, arbitrary: fc.constant<[KeyKind, Array<[string, string]>]>(['garbage', [['authorization', 'Bearer {{admin}}']]]) },
);

// ---------------------------------------------------------------------------------------------
// Configs

const targetName = fc.constantFrom('a', 'b', 'c', '', '__proto__', 'constructor');
const customHost = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('{{fake}}/p/openai/v1', '{{fake}}/p/anthropic/v1', '{{fake}}/p/groq/v1', '{{fake}}/v1', '{{fake}}') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{{refused}}/v1',
      'http://',
      'ftp://127.0.0.1/',
      'http://user:pass@127.0.0.1/v1',
      '{{fake}}/v1?x=1',
      '{{fake}}/v1#f',
      'not a url',
      'http://[::1',
      '{{fake}}/%2e%2e/v1',
      '{{fake}}/./v1/..',
    ),
  },
  { weight: 1, arbitrary: nonStallFault.map((fault) => `{{fake}}/fault/${fault}/v1`) },
);
const statusList = fc.oneof(
  fc.array(fc.constantFrom(429, 500, 502, 503, 504, 408, 400), { maxLength: 5 }),
  fc.array(fc.oneof(fc.integer({ min: -5, max: 1000 }), fc.constant('500' as unknown as number)), { maxLength: 5 }),
  fc.integer({ min: 500, max: 3_000 }).map((length) => Array.from({ length }, (_, index) => 100 + (index % 500))),
);
const retryValue = fc.oneof(
  fc.record(
    {
      attempts: fc.integer({ min: 0, max: 5 }),
      on_status_codes: fc.option(statusList, { nil: undefined }),
      use_retry_after_headers: fc.option(fc.boolean(), { nil: undefined }),
    },
    { requiredKeys: ['attempts'] },
  ),
  jsonValue,
);

/** Regular expressions that backtrack for a very long time on a long run of `a` followed by `!`. */
const catastrophicPattern = fc.constantFrom('^(a+)+$', '(a|aa)+$', '^(a|a?)+$', '^(\\w+\\s?)*$', '(.*a){12}', '^(([a-z])+.)+[A-Z]([a-z])+$');
/** A value that makes those patterns backtrack. */
const redosTrigger = fc.integer({ min: 34, max: 48 }).map((length) => 'a'.repeat(length) + '!');

/** A Mongo-style query with the odd shapes conditional routing must survive. */
const queryArb: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ query: Record<string, unknown>; condition: unknown; logical: unknown }>((tie) => ({
  query: fc
    .array(
      fc.oneof(
        {
          weight: 3,
          arbitrary: fc.tuple(
            fc.oneof(
              fc.constantFrom('metadata.user', 'metadata.env'),
              fc.constantFrom(
                'params.model',
                'params.user',
                'params.messages.0.content',
                'params.stream',
                'url.pathname',
                'metadata.__proto__',
                'params.constructor.name',
                'metadata.a.b.c',
              ),
            ),
            tie('condition'),
          ),
        },
        { weight: 2, arbitrary: fc.tuple(fc.constantFrom('$and', '$or'), tie('logical')) },
        { weight: 1, arbitrary: fc.tuple(jsonKey, jsonValue) },
      ),
      { maxLength: 3 },
    )
    .map(objectOf),
  condition: fc.oneof(
    jsonLeaf,
    fc.record({
      $regex: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom('^a', 'gpt', '(', '[a-', '\\', '.*', '') },
        { weight: 2, arbitrary: catastrophicPattern },
        { weight: 1, arbitrary: jsonLeaf },
      ),
    }),
    fc.record({ $regex: catastrophicPattern, $options: fc.constantFrom('i', 'x', 5) }, { requiredKeys: ['$regex'] }),
    fc.record({ $in: fc.array(jsonLeaf, { maxLength: 3 }) }),
    fc.record({ $nin: fc.oneof(jsonLeaf, fc.array(jsonLeaf, { maxLength: 3 })) }),
    fc.record({ $gt: jsonLeaf, $lte: jsonLeaf }, { requiredKeys: [] }),
    fc.record({ $exists: jsonLeaf }),
    fc.record({ $eq: jsonValue, $ne: jsonValue }, { requiredKeys: [] }),
    fc.tuple(fc.constantFrom('$unknown', '$where', '$expr', '$'), jsonValue).map(([key, value]) => objectOf([[key, value]])),
  ),
  logical: fc.oneof(fc.constantFrom<unknown>(5, 'x', null, true, {}, [], [null], [1], [[]], ['x'], [{}]), fc.array(tie('query'), { maxLength: 3 }), jsonValue),
})).query;

/** A valid conditional config around the generated queries, so they are evaluated. */
const conditionalConfig = fc
  .record({
    conditions: fc.array(fc.record({ query: queryArb, then: fc.constantFrom('a', 'b') }), { minLength: 1, maxLength: 3 }),
    fallbackTo: fc.constantFrom('a', 'b'),
  })
  .map(({ conditions, fallbackTo }) => ({
    strategy: { mode: 'conditional', conditions, default: fallbackTo },
    targets: [
      { name: 'a', provider: 'openai', api_key: 'sk-fuzz-a', custom_host: '{{fake}}/p/openai/v1' },
      { name: 'b', provider: 'anthropic', api_key: 'sk-fuzz-b' },
    ],
  }));

/** A config-shaped value of any quality: right fields, wrong types, unknown and prototype keys. */
const leafTarget = fc
  .record(
    {
      provider: fc.oneof(providerName, oddProviderName),
      api_key: fc.oneof(fc.constant('sk-fuzz'), shortText),
      custom_host: customHost,
      override_params: fc.oneof(fc.record({ model: modelName }), fc.record({ model: nonStallFault.map((fault) => `fuzz-fault-${fault}`) }), jsonValue),
      weight: fc.oneof(fc.double({ min: -1, max: 10, noNaN: true }), jsonLeaf),
      name: targetName,
      retry: retryValue,
      request_timeout: fc.oneof(fc.integer({ min: 1, max: 3_000 }), jsonLeaf),
      forward_headers: fc.oneof(fc.constant(['x-fuzz-fault']), fc.array(fc.oneof(token, shortText, prototypeName), { maxLength: 4 })),
      strict_api_compliance: fc.oneof(fc.boolean(), jsonLeaf),
      cb_config: fc.oneof(fc.record({ failure_threshold: fc.integer({ min: 0, max: 3 }), cooldown_interval: fc.constantFrom(30_000, 1, -1) }), jsonValue),
      cloudB_region: fc.constantFrom('us-central1', 'global', 'EU WEST', '../x'),
      cloudA_region: fc.constantFrom('us-east-1', '', 'x/y'),
      resource_name: fc.constantFrom('fuzz', '..', 'a.b'),
      deployment_id: fc.constantFrom('dep', '..', 'a/b'),
    },
    { requiredKeys: [] },
  )
  .chain((target) => fc.array(fc.tuple(jsonKey, jsonValue), { maxLength: 2 }).map((extra) => objectOf([...Object.entries(target), ...extra])));

const strategyArb = fc.oneof(
  fc.record({ mode: fc.constantFrom('single', 'loadbalance', 'fallback'), on_status_codes: statusList }, { requiredKeys: ['mode'] }),
  fc.record(
    { mode: fc.constant('conditional'), conditions: fc.array(fc.record({ query: queryArb, then: targetName }), { maxLength: 2 }), default: targetName },
    { requiredKeys: ['mode'] },
  ),
  fc.record({ mode: fc.oneof(shortText, prototypeName, jsonLeaf) }),
  jsonValue,
);

/** Random config trees: at most 4 targets per level and 2 levels of nesting, so retries stay bounded. */
const configTree: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown; group: Record<string, unknown> }>((tie) => ({
  node: fc.oneof({ maxDepth: 2, depthIdentifier: 'config' }, leafTarget, tie('group')),
  group: fc
    .record(
      {
        strategy: strategyArb,
        targets: fc.oneof(fc.array(tie('node'), { maxLength: 4 }), jsonLeaf),
        retry: retryValue,
        request_timeout: fc.integer({ min: 1, max: 3_000 }),
        name: targetName,
      },
      { requiredKeys: ['targets'] },
    )
    .chain((group) => fc.array(fc.tuple(jsonKey, jsonValue), { maxLength: 2 }).map((extra) => objectOf([...Object.entries(group), ...extra]))),
})).node;

/** Inline `x-gateway-config` values. */
const inlineConfig = fc.oneof(
  { weight: 4, arbitrary: configTree.map(headerJson) },
  { weight: 3, arbitrary: conditionalConfig.map(headerJson) },
  { weight: 1, arbitrary: deepJson.filter((text) => text.startsWith('{')) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{',
      '{}',
      '{"targets":[]}',
      '{"strategy":{"mode":"fallback"},"targets":[]}',
      '{"__proto__":{"provider":"openai"}}',
      '{"constructor":{"prototype":{"provider":"openai"}}}',
      '{"provider":"openai","provider":"anthropic"}',
      '{"retry":{"attempts":1e309}}',
      '{"request_timeout":-1}',
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 200, max: 1_500 })
      .map((length) => headerJson({ provider: 'openai', api_key: 'sk', forward_headers: Array.from({ length }, (_, index) => `h${index}`) })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{{savedConfig}}',
      '{{savedConfig}}@1',
      '{{savedConfig}}@0',
      '{{savedConfig}}@999999999999999999999',
      '{{savedConfig}}@-1',
      'cfg_nonexistent',
      'cfg_',
      'cfg_@',
      'cfg_' + 'z'.repeat(300),
      '[]',
      'null',
      '__proto__',
    ),
  },
  { weight: 1, arbitrary: headerText },
);

// ---------------------------------------------------------------------------------------------
// Metadata and other x-gateway-* headers

const metadataValue = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(fc.tuple(fc.oneof(fc.constantFrom('user', 'env', '_user'), prototypeName, fc.string({ maxLength: 6 })), fc.oneof(jsonValue, redosTrigger)), {
        maxLength: 4,
      })
      .map((entries) => headerJson(objectOf(entries))),
  },
  { weight: 2, arbitrary: redosTrigger.map((text) => headerJson({ user: text, env: text })) },
  { weight: 1, arbitrary: fc.constantFrom('', '[]', 'null', '"x"', '{', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}') },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: headerText },
);

/** Headers of the gateway's own, with values from plausible to garbage. */
const gatewayHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 3, arbitrary: metadataValue.map((value): [string, string] => ['x-gateway-metadata', value]) },
  {
    weight: 2,
    arbitrary: fc.tuple(
      fc.constantFrom('x-gateway-trace-id', 'x-gateway-span-id', 'x-gateway-parent-span-id', 'x-gateway-span-name'),
      fc.oneof(headerText, longHeaderValue, fc.constantFrom('fuzz-trace-known', '../..', '%2e%2e', 'log_x'), prototypeName),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(
      fc.constantFrom(
        'x-gateway-provider',
        'x-gateway-virtual-key',
        'x-gateway-custom-host',
        'x-gateway-cache',
        'x-gateway-strict-open-ai-compliance',
        'x-gateway-cloudA-region',
        'x-gateway-cloudB-region',
        'x-gateway-cloudC-api-version',
      ),
      fc.oneof(headerText, prototypeName),
    ),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(
      token.map((name) => `x-gateway-${name}`),
      fc.oneof(headerText, longHeaderValue),
    ),
  },
);

/** Headers that are not the gateway's: prototype names, hop-by-hop headers, long values. */
const foreignHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  { weight: 1, arbitrary: fc.tuple(prototypeName, fc.oneof(headerText, prototypeName)) },
  {
    weight: 3,
    arbitrary: fc.tuple(
      fc.constantFrom(
        'accept',
        'accept-encoding',
        'user-agent',
        'x-forwarded-for',
        'via',
        'forwarded',
        'te',
        'upgrade',
        'proxy-authorization',
        'anthropic-version',
        'anthropic-beta',
        'cookie',
        'origin',
        'x-amz-date',
      ),
      headerText,
    ),
  },
  { weight: 3, arbitrary: fc.tuple(token, fc.oneof(headerText, longHeaderValue)) },
);

const oddHeaders = fc.array(fc.oneof({ weight: 3, arbitrary: gatewayHeader }, { weight: 2, arbitrary: foreignHeader }), { maxLength: 3 });

// ---------------------------------------------------------------------------------------------
// Choosing a provider (shared by the unified routes and pass-through)

interface Routing {
  headers: Array<[string, string]>;
  /** Whether the fake provider is told to misbehave. */
  faulty?: boolean;
  /** A model name the body should use (a fault hint), if any. */
  model?: string;
  stallAttempts: number;
}

/** Headers that select a provider directly, with the settings native providers need. */
const providerHeaders: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(providerName, fc.oneof(fc.constant('Bearer sk-fuzz'), fc.constant(''), headerText))
      .map(([provider, auth]): Array<[string, string]> => [['x-gateway-provider', provider], ...(auth ? [['authorization', auth] as [string, string]] : [])]),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Array<[string, string]>>([
      ['x-gateway-provider', 'vertex-ai'],
      ['authorization', 'Bearer ya29.fuzz'],
      ['x-gateway-cloudB-region', 'us-central1'],
      ['x-gateway-cloudB-project-id', 'fuzz-project'],
    ]),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Array<[string, string]>>([
      ['x-gateway-provider', 'bedrock'],
      ['x-gateway-cloudA-access-key-id', 'AKIAFUZZ'],
      ['x-gateway-cloudA-secret-access-key', 'secret'],
      ['x-gateway-cloudA-region', 'us-east-1'],
    ]),
  },
  {
    weight: 1,
    arbitrary: fc.constant<Array<[string, string]>>([
      ['x-gateway-provider', 'azure-openai'],
      ['authorization', 'Bearer az-key'],
      ['x-gateway-cloudC-resource-name', 'fuzz'],
      ['x-gateway-cloudC-deployment-id', 'dep'],
      ['x-gateway-cloudC-api-version', '2024-10-21'],
    ]),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('@fuzz-openai', '@fuzz-anthropic', '@fuzz-vertex', '@fuzz-bedrock', '@fuzz-cohere', '@missing')
      .map((slug): Array<[string, string]> => [['x-gateway-provider', slug]]),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('fuzz-openai', 'fuzz-google', 'missing', '__proto__').map((slug): Array<[string, string]> => [['x-gateway-virtual-key', slug]]),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(customHost, fc.option(providerName, { nil: undefined }))
      .map(
        ([host, provider]): Array<[string, string]> => [
          ['x-gateway-custom-host', host],
          ...(provider ? [['x-gateway-provider', provider] as [string, string]] : []),
        ],
      ),
  },
  {
    weight: 1,
    arbitrary: oddProviderName.map(
      (provider): Array<[string, string]> => [
        ['x-gateway-provider', provider],
        ['authorization', 'Bearer sk-fuzz'],
      ],
    ),
  },
);

/** A vertex-ai service account in a config: the gateway signs a JWT and trades it at the fake's token endpoint. */
const serviceAccountConfig = fc.constantFrom('status-500', 'reset', 'invalid-json', 'none').map((tokenFault) => ({
  provider: 'vertex-ai',
  cloudB_region: 'us-central1',
  cloudB_project_id: 'fuzz-project',
  cloudB_service_account_json: {
    type: 'service_account',
    client_email: 'fuzz@fuzz-project.iam.gserviceaccount.com',
    private_key_id: 'fuzz-key',
    private_key: '{{privateKey}}',
    token_uri: tokenFault === 'none' ? '{{tokenUri}}' : `{{tokenUri}}/fuzz-fault-${tokenFault}`,
  },
}));

/** Conditional routing together with metadata its queries look at (now and then a value a pattern backtracks on). */
const conditionalRouting: fc.Arbitrary<Routing> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({ config: conditionalConfig, user: fc.oneof(redosTrigger, shortText, fc.constant('alice')), extra: metadataValue })
      .map(({ config, user, extra }) => ({
        headers: [
          ['x-gateway-config', headerJson(config)],
          [
            'x-gateway-metadata',
            extra.startsWith('{"') ? `{"user":${headerJson(user)},"env":${headerJson(user)},${extra.slice(1)}` : headerJson({ user, env: user }),
          ],
        ] as Array<[string, string]>,
        stallAttempts: 0,
      })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ pattern: catastrophicPattern, where: fc.constantFrom('metadata.user', 'metadata.env'), user: redosTrigger, then: fc.constantFrom('a', 'b') })
      .map(({ pattern, where, user, then }) => ({
        headers: [
          [
            'x-gateway-config',
            headerJson({
              strategy: { mode: 'conditional', conditions: [{ query: { [where]: { $regex: pattern } }, then }], default: 'a' },
              targets: [
                { name: 'a', provider: 'openai', api_key: 'sk', custom_host: '{{fake}}/p/openai/v1' },
                { name: 'b', provider: 'groq', api_key: 'sk' },
              ],
            }),
          ],
          ['x-gateway-metadata', headerJson({ user, env: user })],
        ] as Array<[string, string]>,
        stallAttempts: 0,
      })),
  },
);

/** How the request picks its provider, without any fault. */
const plainRouting: fc.Arbitrary<Routing> = fc.oneof(
  { weight: 2, arbitrary: conditionalRouting },
  { weight: 5, arbitrary: providerHeaders.map((headers) => ({ headers, stallAttempts: 1 })) },
  {
    weight: 4,
    arbitrary: inlineConfig.map((config) => ({
      headers: [['x-gateway-config', config] as [string, string], ['authorization', 'Bearer sk-fuzz'] as [string, string]],
      stallAttempts: 0,
    })),
  },
  {
    weight: 1,
    arbitrary: serviceAccountConfig.map((config) => ({ headers: [['x-gateway-config', headerJson(config)] as [string, string]], stallAttempts: 0 })),
  },
  { weight: 1, arbitrary: fc.constant<Routing>({ headers: [], stallAttempts: 0 }) },
);

/** Where a fault hint travels: a forwarded header, the model name, or the custom host's path. */
interface FaultDelivery {
  headers: Array<[string, string]>;
  model?: string;
  host?: string;
}
const faultDelivery = (fault: Fault, unified: boolean): fc.Arbitrary<FaultDelivery> =>
  fc.oneof(
    fc.constantFrom('comma', 'array').map(
      (form): FaultDelivery => ({
        headers: [
          [faultHeader, fault],
          ...(unified ? [['x-gateway-forward-headers', form === 'comma' ? `${faultHeader}, accept` : `["${faultHeader}"]`] as [string, string]] : []),
        ],
      }),
    ),
    fc.constant<FaultDelivery>({ headers: [], model: `fuzz-fault-${fault}` }),
    fc.constant<FaultDelivery>({ headers: [], host: `{{fake}}/fault/${fault}/v1` }),
  );

/** Providers whose adapter reaches the fake without more settings than a key. */
const simpleProvider = fc.constantFrom('openai', 'groq', 'mistral-ai', 'deepseek', 'anthropic', 'google', 'cohere', 'azure-ai', 'ollama', 'perplexity-ai');

/**
 * A routing that makes the fake misbehave. Stall faults come with a small request timeout and
 * routings whose number of attempts is known (one target, at most one retry or one fallback).
 */
const faultyRouting = (unified: boolean): fc.Arbitrary<Routing> =>
  fc
    .oneof(
      { weight: 6, arbitrary: nonStallFault.map((fault) => ({ fault, stall: false })) },
      { weight: 1, arbitrary: stallFault.map((fault) => ({ fault, stall: true })) },
    )
    .chain(({ fault, stall }) =>
      fc
        .record({
          delivery: faultDelivery(fault, unified),
          provider: simpleProvider,
          shape: fc.constantFrom('headers', 'retry', 'fallback', 'catalog'),
          timeoutMs: fc.integer({ min: 100, max: 600 }),
        })
        .map(({ delivery, provider, shape, timeoutMs }): Routing => {
          const headers: Array<[string, string]> = [...delivery.headers];
          const host = delivery.host;
          let stallAttempts = 1;
          if (shape === 'headers' || (shape === 'catalog' && host)) {
            headers.push(['x-gateway-provider', host ? 'openai' : provider], ['authorization', 'Bearer sk-fuzz']);
            if (host) headers.push(['x-gateway-custom-host', host]);
          } else if (shape === 'catalog') {
            headers.push(['x-gateway-provider', '@fuzz-openai']);
          } else {
            const target = {
              provider: host ? 'openai' : provider,
              api_key: 'sk-fuzz',
              ...(host ? { custom_host: host } : {}),
              ...(delivery.model ? { override_params: { model: delivery.model } } : {}),
            };
            const config =
              shape === 'retry'
                ? { retry: { attempts: 1, on_status_codes: [408, 429, 500, 502, 503] }, ...target }
                : { strategy: { mode: 'fallback' }, targets: [target, { ...target, provider: host ? 'openai' : 'groq' }] };
            headers.push(['x-gateway-config', headerJson(config)]);
            stallAttempts = 2;
          }
          if (stall) headers.push(['x-gateway-request-timeout', String(timeoutMs)]);
          return { headers, model: delivery.model, stallAttempts, faulty: true };
        }),
    );

const routing = (unified: boolean) => fc.oneof({ weight: 3, arbitrary: plainRouting }, { weight: 2, arbitrary: faultyRouting(unified) });

/** An `x-gateway-request-timeout` for requests that do not rely on one: plausible, tiny or garbage. */
const timeoutHeader = fc.option(
  fc.oneof(fc.integer({ min: 1, max: 5_000 }).map(String), fc.constantFrom('0', '-1', '1.5', '1e3', 'abc', '99999999999999999999', ' 100 ', '')),
  { freq: 6, nil: undefined },
);

// ---------------------------------------------------------------------------------------------
// Bodies of the unified routes

const imageUrl = fc.constantFrom(
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'data:image/png;base64,!!!',
  'data:,',
  '{{fake}}/assets/pixel.png',
  '{{refused}}/x.png',
  's3://fuzz-bucket/a.png',
  's3://',
  'file:///etc/passwd',
  'gs://b/o.png',
  '',
);
const contentPart = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.oneof(shortText, anyText) }),
  fc.record({
    type: fc.constant('image_url'),
    image_url: fc.oneof(fc.record({ url: imageUrl, detail: fc.constantFrom('auto', 'low', 'x') }, { requiredKeys: ['url'] }), jsonLeaf),
  }),
  fc.record({ type: fc.constantFrom('input_audio', 'file', 'document', 'tool_result', 'thinking', '???'), data: jsonValue }),
  jsonValue,
);
const message = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ role: fc.constantFrom('user', 'system', 'developer'), content: fc.oneof(shortText, fc.array(contentPart, { maxLength: 3 })) }),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        role: fc.constant('assistant'),
        content: fc.oneof(fc.constant(null), shortText),
        tool_calls: fc.oneof(
          fc.array(
            fc.record({
              id: shortText,
              type: fc.constant('function'),
              function: fc.record({ name: shortText, arguments: fc.oneof(shortText, fc.constant('{"a":1}')) }),
            }),
            { maxLength: 2 },
          ),
          jsonValue,
        ),
      },
      { requiredKeys: ['role'] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ role: fc.constant('tool'), tool_call_id: shortText, content: shortText }) },
  { weight: 1, arbitrary: fc.record({ role: fc.oneof(shortText, prototypeName, jsonLeaf), content: jsonValue }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: jsonValue },
);
const tools = fc.array(
  fc.record({
    type: fc.constant('function'),
    function: fc.record({
      name: fc.oneof(fc.constant('get_weather'), shortText),
      parameters: fc.oneof(fc.constant({ type: 'object', properties: { city: { type: 'string' } } }), jsonValue),
    }),
  }),
  { maxLength: 2 },
);

const commonFields = {
  stream: fc.oneof({ weight: 6, arbitrary: fc.boolean() }, { weight: 1, arbitrary: jsonLeaf }),
  stream_options: fc.oneof(fc.record({ include_usage: fc.boolean() }), jsonLeaf),
  max_tokens: fc.oneof(fc.integer({ min: 1, max: 100 }), jsonLeaf),
  temperature: fc.oneof(fc.double({ min: 0, max: 2, noNaN: true }), jsonLeaf),
  user: shortText,
};

const chatObject = fc
  .record(
    {
      model: modelName,
      messages: fc.array(message, { minLength: 1, maxLength: 4 }),
      tools,
      tool_choice: fc.oneof(fc.constantFrom('auto', 'none', 'required'), jsonValue),
      response_format: jsonValue,
      n: fc.integer({ min: -1, max: 3 }),
      ...commonFields,
    },
    { requiredKeys: ['model', 'messages'] },
  )
  .map((body) => body as Record<string, unknown>);
const completionObject = fc
  .record(
    {
      model: modelName,
      prompt: fc.oneof(shortText, fc.array(shortText, { maxLength: 3 }), fc.array(fc.integer(), { maxLength: 3 }), jsonValue),
      suffix: shortText,
      ...commonFields,
    },
    { requiredKeys: ['model', 'prompt'] },
  )
  .map((body) => body as Record<string, unknown>);
const embeddingObject = fc
  .record(
    {
      model: modelName,
      input: fc.oneof(
        shortText,
        fc.array(shortText, { maxLength: 4 }),
        fc.array(fc.integer(), { maxLength: 4 }),
        fc.array(fc.array(fc.integer(), { maxLength: 3 }), { maxLength: 2 }),
        jsonValue,
      ),
      encoding_format: fc.oneof(fc.constantFrom('float', 'base64'), jsonLeaf),
      dimensions: fc.oneof(fc.integer({ min: -1, max: 4096 }), jsonLeaf),
      stream: fc.oneof(fc.constant(false), jsonLeaf),
    },
    { requiredKeys: ['model', 'input'] },
  )
  .map((body) => body as Record<string, unknown>);

/** Wrong types for the fields every unified body is checked for. */
const wrongTypes = fc.record(
  {
    model: fc.oneof(fc.integer(), fc.array(shortText, { maxLength: 2 }), fc.constant(null), fc.constant({}), fc.constant(''), fc.constant(true)),
    messages: fc.oneof(
      shortText,
      fc.integer(),
      fc.constant({}),
      fc.constant([]),
      fc.constant([null]),
      fc.constant([1]),
      fc.constant([{}]),
      fc.constant([{ role: 5 }]),
    ),
    stream: fc.oneof(fc.constantFrom('yes', 'true', 1, 0, {}, [])),
    input: fc.oneof(fc.constant(null), fc.constant({})),
    prompt: fc.constant(null),
  },
  { requiredKeys: [] },
);

/** Adds extra keys (prototype names, unknown fields) at the top of a body. */
const withExtraKeys = (body: fc.Arbitrary<Record<string, unknown>>) =>
  fc.tuple(body, fc.array(fc.tuple(jsonKey, jsonValue), { maxLength: 3 })).map(([value, extra]) => objectOf([...Object.entries(value), ...extra]));

/** Large bodies: long arrays in a valid body (up to about 1 MB), now and then one above the 4 MB limit. */
const bigBody = (model: string): fc.Arbitrary<BodyPlan> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ count: fc.integer({ min: 1_000, max: 40_000 }), field: fc.constantFrom('messages', 'input', 'prompt', 'tools', 'stop') }).map(
        ({ count, field }): BodyPlan => ({
          kind: 'repeat',
          prefix: `{"model":"${model}","messages":[{"role":"user","content":"hi"}],"input":"x","prompt":"x","${field}":[`,
          fill: field === 'messages' ? '{"role":"user","content":"a"},' : field === 'tools' ? '{"type":"function","function":{"name":"f"}},' : '"a",',
          times: count,
          suffix: field === 'messages' ? '{"role":"user","content":"z"}]}' : '"z"]}',
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant<BodyPlan>({
        kind: 'repeat',
        prefix: `{"model":"${model}","messages":[{"role":"user","content":"`,
        fill: 'a',
        times: 4 * 1024 * 1024 + 100,
        suffix: '"}]}',
      }),
    },
  );

/** A plain, valid body, so a request reaches the provider (and the fault it was told). */
const wellFormedBody = (family: 'chat' | 'completions' | 'embeddings', model: string | undefined): fc.Arbitrary<BodyPlan> =>
  fc.record({ stream: fc.boolean(), usage: fc.option(fc.boolean(), { nil: undefined }), many: fc.boolean() }).map(({ stream, usage, many }) => {
    const name = model ?? (family === 'embeddings' ? 'text-embedding-3-small' : 'gpt-4o-mini');
    const streaming = family === 'embeddings' ? {} : { stream, ...(usage === undefined ? {} : { stream_options: { include_usage: usage } }) };
    if (family === 'chat') return jsonBody({ model: name, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16, ...streaming });
    if (family === 'completions') return jsonBody({ model: name, prompt: many ? ['a', 'b'] : 'hi', ...streaming });
    return jsonBody({ model: name, input: many ? ['a', 'b'] : 'a' });
  });

/** A body for a unified route: mostly well-formed, often not. `model`, when given, replaces the body's model. */
const unifiedBody = (objectArb: fc.Arbitrary<Record<string, unknown>>, model: string | undefined): fc.Arbitrary<BodyPlan> =>
  fc.oneof(
    { weight: 12, arbitrary: withExtraKeys(objectArb).map((body) => jsonBody(model ? { ...body, model } : body)) },
    { weight: 2, arbitrary: fc.tuple(objectArb, wrongTypes).map(([body, wrong]) => jsonBody({ ...body, ...wrong })) },
    { weight: 2, arbitrary: invalidJson.map((text): BodyPlan => ({ kind: 'text', text })) },
    { weight: 1, arbitrary: fc.constant<BodyPlan>({ kind: 'none' }) },
    {
      weight: 1,
      arbitrary: deepJson.map(
        (deep): BodyPlan => ({
          kind: 'text',
          text: `{"model":"${model ?? 'gpt-4o-mini'}","messages":[{"role":"user","content":${deep}}],"input":${deep},"prompt":${deep}}`,
        }),
      ),
    },
    { weight: 1, arbitrary: bigBody(model ?? 'gpt-4o-mini') },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 4_096 }).map((size): BodyPlan => ({ kind: 'repeat', prefix: '', fill: '\u00ff', times: size, suffix: '' })),
    },
  );

// ---------------------------------------------------------------------------------------------
// Paths and queries

const queryName = fc.oneof(
  { weight: 1, arbitrary: prototypeName },
  { weight: 3, arbitrary: fc.constantFrom('limit', 'after', 'api-version', 'alt', 'key', 'a[b]', 'a.b', '') },
  { weight: 3, arbitrary: token },
);
const queryValue = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      '1',
      '0',
      '-1',
      '100',
      '101',
      '1e3',
      'abc',
      '%',
      '%zz',
      '%c3%28',
      '%00',
      '%2e%2e%2f',
      'log_x',
      'key_x',
      'cfg_x',
      '[]',
      '{}',
      'a=b',
    ),
  },
  { weight: 6, arbitrary: fc.string({ unit: tokenChar, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: 300, max: 6_000 }).map((length) => 'q'.repeat(length)) },
);
const queryString = fc.option(
  fc.array(fc.tuple(queryName, queryValue), { minLength: 1, maxLength: 3 }).map((pairs) => '?' + pairs.map(([name, value]) => `${name}=${value}`).join('&')),
  { freq: 3, nil: undefined },
);

/** Ways to write a route's own path: exact, with a trailing or doubled slash, or with odd escapes. */
const pathVariant = (path: string) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(path) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        `${path}/`,
        path.replace('/v1/', '//v1//'),
        path.replace('/v1/', '/v1/./'),
        path.replace('/v1/', '/v1/x/../'),
        path.replace('/v1/', '/v1/%2e/'),
        path.replace('/v1', '/V1'),
        path.replace(/\/([a-z])/, (_, c) => `/%${c.charCodeAt(0).toString(16)}`),
      ),
    },
  );

/** Segments for pass-through paths: names, dot segments raw and percent-encoded at any depth, slashes, `%` garbage. */
const pathSegment = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('models', 'models/gpt-4o-mini', 'echo', 'files', 'audio/speech', 'batches', 'assistants', 'x', 'v1', 'chat', 'completions'),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '.',
      '..',
      '%2e',
      '%2E%2e',
      '.%2e',
      '%2e.',
      '%252e%252e',
      '%25252e%25252e',
      '..%2f',
      '%2e%2e%2f',
      '%2f',
      '%2F..',
      '%5c',
      '%5c..',
      '\\',
      '..\\',
      '%',
      '%zz',
      '%c3%28',
      '%ff',
      '%00',
      'a%00b',
      '%%',
      '%2',
      '~',
      'a;b',
      "a'b",
      '@',
      '::',
      '%3A',
      'a%20b',
      '%C0%AE%C0%AE',
    ),
  },
  { weight: 1, arbitrary: nonStallFault.map((fault) => `fault/${fault}`) },
  { weight: 1, arbitrary: prototypeName },
  { weight: 1, arbitrary: fc.integer({ min: 200, max: 7_000 }).map((length) => 's'.repeat(length)) },
  { weight: 1, arbitrary: fc.string({ unit: tokenChar, minLength: 1, maxLength: 12 }) },
);
const passthroughPath = fc.array(pathSegment, { minLength: 1, maxLength: 5 }).map((segments) => `/v1/${segments.join('/')}`);

/** Raw bytes of non-ASCII characters (UTF-8, written as latin1 characters so node:http sends them as they are). */
const rawNonAscii = fc.constantFrom('é', 'ü', '日本', '\u{1F600}', '\u00ff', '\u0080').map((text) => Buffer.from(text, 'utf8').toString('latin1'));

// ---------------------------------------------------------------------------------------------
// Methods

const oddMethod = fc.constantFrom('PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'PURGE', 'FOO', 'BREW', 'M-SEARCH', 'LOCK');
const method = (usual: readonly string[]) => fc.oneof({ weight: 14, arbitrary: fc.constantFrom(...usual) }, { weight: 1, arbitrary: oddMethod });

// ---------------------------------------------------------------------------------------------
// Families

function assemble(parts: {
  family: Family;
  method: string;
  target: string;
  key: [KeyKind, Array<[string, string]>];
  headers?: Array<[string, string]>;
  extra: Array<[string, string]>;
  body: BodyPlan;
  contentType?: string;
  stallAttempts?: number;
  mustRefuse?: string;
  deadlineMs?: number;
}): FuzzRequest {
  const headers: Array<[string, string]> = [...parts.key[1], ...(parts.headers ?? [])];
  if (parts.body.kind !== 'none' && parts.contentType !== undefined && parts.contentType !== '') headers.push(['content-type', parts.contentType]);
  // Extra headers must not take away what a stalled provider relies on to end.
  const guarded = new Set([
    'x-gateway-request-timeout',
    'x-gateway-forward-headers',
    faultHeader,
    'x-gateway-config',
    'x-gateway-custom-host',
    'x-gateway-provider',
  ]);
  const stalls = (parts.stallAttempts ?? 0) > 0 && headers.some(([name]) => name === 'x-gateway-request-timeout');
  for (const header of parts.extra) if (!stalls || !guarded.has(header[0].toLowerCase())) headers.push(header);
  const request: FuzzRequest = {
    family: parts.family,
    method: parts.method,
    target: parts.target,
    headers,
    body: parts.body,
    stallAttempts: parts.stallAttempts ?? 0,
  };
  if (parts.mustRefuse !== undefined) request.mustRefuse = parts.mustRefuse;
  if (parts.deadlineMs !== undefined) request.deadlineMs = parts.deadlineMs;
  return request;
}

/** A random request timeout, unless the route already set the small one a stalling fault needs. */
const timeoutFor = (route: { stallAttempts: number; headers: [string, string][] }) =>
  route.stallAttempts > 0 && route.headers.some(([name]) => name === 'x-gateway-request-timeout') ? fc.constant(undefined) : timeoutHeader;

const withTimeout = (headers: [string, string][], timeout: string | undefined): [string, string][] =>
  timeout === undefined ? headers : [...headers, ['x-gateway-request-timeout', timeout]];

const unifiedRoutes = {
  chat: ['/v1/chat/completions', chatObject],
  completions: ['/v1/completions', completionObject],
  embeddings: ['/v1/embeddings', embeddingObject],
} as const;

/**
 * A request to a route that reaches a provider: what the family decides (method, path, body, and
 * how they become the target) around the parts every such request varies the same way.
 */
const routedRequest = (
  family: Family,
  route: Routing,
  own: { method: fc.Arbitrary<string>; path: fc.Arbitrary<string>; body: fc.Arbitrary<BodyPlan> },
  shape: (parts: { method: string; path: string; query: string | undefined }) => { method: string; target: string },
) =>
  fc
    .record({
      method: own.method,
      path: own.path,
      query: queryString,
      key: gatewayKey,
      body: own.body,
      contentType,
      timeout: timeoutFor(route),
      extra: oddHeaders,
    })
    .map((parts) =>
      assemble({
        family,
        ...shape(parts),
        key: parts.key,
        headers: withTimeout(route.headers, parts.timeout),
        extra: parts.extra,
        body: parts.body,
        contentType: parts.contentType,
        stallAttempts: route.stallAttempts,
      }),
    );

/** A request to one of the unified routes (chat, completions, embeddings). */
const unifiedRequest = (family: 'chat' | 'completions' | 'embeddings') =>
  routing(true).chain((route) =>
    routedRequest(
      family,
      route,
      {
        method: method(['POST']),
        path: pathVariant(unifiedRoutes[family][0]),
        body: route.faulty
          ? fc.oneof(
              { weight: 3, arbitrary: wellFormedBody(family, route.model) },
              { weight: 1, arbitrary: unifiedBody(unifiedRoutes[family][1], route.model) },
            )
          : unifiedBody(unifiedRoutes[family][1], route.model),
      },
      (parts) => ({ method: parts.method, target: parts.path + (parts.query ?? '') }),
    ),
  );

/** Anything the pass-through route may be sent: JSON, SSE requests, bytes, nothing. */
const passthroughBody = (model: string | undefined) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constant<BodyPlan>({ kind: 'none' }) },
    {
      weight: 4,
      arbitrary: fc.record({ model: fc.constant(model ?? 'gpt-4o-mini'), input: fc.oneof(shortText, jsonValue), stream: fc.boolean() }).map(jsonBody),
    },
    { weight: 2, arbitrary: jsonValue.map(jsonBody) },
    { weight: 1, arbitrary: invalidJson.map((text): BodyPlan => ({ kind: 'text', text })) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 200_000 }).map((size): BodyPlan => ({ kind: 'repeat', prefix: '', fill: 'b', times: size, suffix: '' })),
    },
  );

const passthroughRequest = (family: 'passthrough' | 'responses') =>
  routing(false).chain((route) =>
    routedRequest(
      family,
      route,
      {
        method: method(['GET', 'POST', 'PUT', 'DELETE']),
        path: family === 'responses' ? pathVariant('/v1/responses') : passthroughPath,
        body: passthroughBody(route.model),
      },
      (parts) => ({
        method: family === 'responses' && parts.method === 'GET' ? 'POST' : parts.method,
        // A model-name fault travels in the path for pass-through (the body is not read by the gateway).
        target: (route.model ? `/v1/${route.model}` : '') + parts.path + (parts.query ?? ''),
      }),
    ),
  );

/** Bodies for POST/PUT /v1/configs. */
const configBody = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ name: fc.oneof(shortText, jsonLeaf), config: fc.oneof(configTree, conditionalConfig) }, { requiredKeys: [] }).map(jsonBody),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(jsonKey, jsonValue).map(([key, value]) =>
      jsonBody(
        objectOf([
          ['name', 'x'],
          ['config', { provider: 'openai' }],
          [key, value],
        ]),
      ),
    ),
  },
  { weight: 1, arbitrary: jsonValue.map(jsonBody) },
  { weight: 1, arbitrary: invalidJson.map((text): BodyPlan => ({ kind: 'text', text })) },
  { weight: 1, arbitrary: deepJson.map((deep): BodyPlan => ({ kind: 'text', text: `{"name":"deep","config":${deep}}` })) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1_000, max: 30_000 }).map(
      (count): BodyPlan => ({
        kind: 'repeat',
        prefix: '{"name":"big","config":{"strategy":{"mode":"fallback"},"targets":[',
        fill: '{"provider":"openai","api_key":"k"},',
        times: count,
        suffix: '{"provider":"openai","api_key":"k"}]}}',
      }),
    ),
  },
  { weight: 1, arbitrary: fc.constant<BodyPlan>({ kind: 'none' }) },
);

const configId = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('{{savedConfig}}', '{{savedConfig}}@1', '{{scratchConfig}}') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'cfg_nonexistent',
      'cfg_x@0',
      'cfg_x@-1',
      'cfg_x@1.5',
      'cfg_x@99999999999999999999',
      '{{savedConfig}}@',
      '{{savedConfig}}@@1',
      '%2e%2e',
      '..',
      'cfg_%00',
      'cfg_' + 'y'.repeat(2_000),
      '%',
      '%zz',
    ),
  },
  { weight: 1, arbitrary: prototypeName },
  { weight: 1, arbitrary: fc.string({ unit: tokenChar, minLength: 1, maxLength: 30 }) },
);

const configsRequest = fc
  .record({
    method: method(['GET', 'GET', 'POST', 'PUT', 'DELETE']),
    id: fc.option(configId, { freq: 2, nil: undefined }),
    query: queryString,
    key: gatewayKey,
    body: configBody,
    contentType,
    extra: oddHeaders,
  })
  .map((parts) => {
    // Routing uses the saved config: it may be read but never changed, so a replay meets the same state.
    const id = parts.id !== undefined && parts.id.startsWith('{{savedConfig}}') && parts.method !== 'GET' ? '{{scratchConfig}}' : parts.id;
    return assemble({
      family: 'configs',
      method: parts.method,
      target: `/v1/configs${id === undefined ? '' : `/${id}`}${parts.query ?? ''}`,
      key: parts.key,
      extra: parts.extra,
      body: parts.body,
      contentType: parts.contentType,
    });
  });

/** Bodies for POST/PUT /v1/providers (hosts only ever point at the fake). */
const providerBody = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          slug: fc.oneof(fc.constantFrom('fz-1', 'fz-2', 'fuzz-openai', 'FZ', 'a'.repeat(65), '', '..', 'fz/1'), prototypeName, jsonLeaf),
          provider: fc.oneof(providerName, oddProviderName, jsonLeaf),
          name: fc.oneof(shortText, jsonLeaf),
          api_key: fc.oneof(shortText, jsonLeaf),
          custom_host: fc.oneof(customHost, jsonLeaf),
          cloudA_region: shortText,
          cloudB_region: fc.constantFrom('us-central1', 'global', 'x y'),
          cloudB_service_account_json: fc.oneof(jsonValue, fc.constant({ client_email: 'a@b', private_key: 'not a key', token_uri: '{{tokenUri}}' })),
          cloudC_resource_name: shortText,
          resource_name: shortText,
        },
        { requiredKeys: [] },
      )
      .chain((body) => fc.array(fc.tuple(jsonKey, jsonValue), { maxLength: 2 }).map((extra) => jsonBody(objectOf([...Object.entries(body), ...extra])))),
  },
  { weight: 1, arbitrary: jsonValue.map(jsonBody) },
  { weight: 1, arbitrary: invalidJson.map((text): BodyPlan => ({ kind: 'text', text })) },
  { weight: 1, arbitrary: fc.constant<BodyPlan>({ kind: 'none' }) },
);

const providersRequest = fc
  .record({
    method: method(['GET', 'GET', 'POST', 'PUT', 'DELETE']),
    slug: fc.option(
      fc.oneof(fc.constantFrom('fuzz-openai', 'fuzz-scratch', 'fz-1', 'missing', '%2e%2e', '..', 'FUZZ-OPENAI', '%', 's'.repeat(3_000)), prototypeName),
      { freq: 2, nil: undefined },
    ),
    query: queryString,
    key: gatewayKey,
    body: providerBody,
    contentType,
    extra: oddHeaders,
  })
  .map((parts) => {
    // Entries routing relies on are read, never changed.
    const slug = parts.slug?.startsWith('fuzz-') && parts.slug !== 'fuzz-scratch' && parts.method !== 'GET' ? 'fuzz-scratch' : parts.slug;
    return assemble({
      family: 'providers',
      method: parts.method,
      target: `/v1/providers${slug === undefined ? '' : `/${slug}`}${parts.query ?? ''}`,
      key: parts.key,
      extra: parts.extra,
      body: parts.body,
      contentType: parts.contentType,
    });
  });

const apiKeyBody = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .record(
        {
          name: fc.oneof(shortText, fc.constantFrom('', '   ', 'n'.repeat(256)), jsonLeaf),
          role: fc.oneof(fc.constantFrom('admin', 'member', 'owner', 'ADMIN', ''), jsonLeaf),
        },
        { requiredKeys: [] },
      )
      .chain((body) => fc.array(fc.tuple(jsonKey, jsonValue), { maxLength: 2 }).map((extra) => jsonBody(objectOf([...Object.entries(body), ...extra])))),
  },
  { weight: 1, arbitrary: jsonValue.map(jsonBody) },
  { weight: 1, arbitrary: invalidJson.map((text): BodyPlan => ({ kind: 'text', text })) },
  { weight: 1, arbitrary: fc.constant<BodyPlan>({ kind: 'none' }) },
);

const apiKeysRequest = fc
  .record({
    method: method(['GET', 'GET', 'POST', 'DELETE']),
    id: fc.option(fc.oneof(fc.constantFrom('{{spareKeyId}}', 'key_nonexistent', 'key_', '%2e%2e', '..', 'k'.repeat(2_000), '%'), prototypeName), {
      freq: 2,
      nil: undefined,
    }),
    query: queryString,
    key: gatewayKey,
    body: apiKeyBody,
    contentType,
    extra: oddHeaders,
  })
  .map((parts) =>
    assemble({
      family: 'api-keys',
      method: parts.method,
      target: `/v1/api-keys${parts.id === undefined ? '' : `/${parts.id}`}${parts.query ?? ''}`,
      key: parts.key,
      extra: parts.extra,
      body: parts.body,
      contentType: parts.contentType,
    }),
  );

const logsRequest = fc
  .record({ method: method(['GET']), query: queryString, key: gatewayKey, extra: oddHeaders })
  .map((parts) =>
    assemble({ family: 'logs', method: parts.method, target: `/v1/logs${parts.query ?? ''}`, key: parts.key, extra: parts.extra, body: { kind: 'none' } }),
  );

const traceId = fc.oneof(
  fc.constantFrom(
    'fuzz-trace-known',
    'fuzz-trace-unknown',
    '50%25off',
    'log_x',
    '%2e%2e',
    '..',
    '.',
    '%',
    '%zz',
    '%c3%28',
    'a%2Fb',
    't'.repeat(300),
    't'.repeat(5_000),
  ),
  prototypeName,
  fc.string({ unit: tokenChar, minLength: 1, maxLength: 20 }),
);
const traceRequest = fc.record({ method: method(['GET']), id: traceId, query: queryString, key: gatewayKey, extra: oddHeaders }).map((parts) =>
  assemble({
    family: 'log-trace',
    method: parts.method,
    target: `/v1/logs/${parts.id}${parts.query ?? ''}`,
    key: parts.key,
    extra: parts.extra,
    body: { kind: 'none' },
  }),
);

const unknownRouteRequest = fc
  .record({
    method: method(['GET', 'POST']),
    path: fc.oneof(
      fc.constantFrom(
        '/',
        '/health',
        '/v1',
        '/v1/',
        '/v2/chat/completions',
        '/V1/models',
        '/v1%2Fmodels',
        '//',
        '/..',
        '/%2e%2e/v1/models',
        '/favicon.ico',
        '/api/v1/chat/completions',
        '*',
      ),
      fc.integer({ min: 1_000, max: 7_000 }).map((length) => '/' + 'u'.repeat(length)),
    ),
    query: queryString,
    key: gatewayKey,
    extra: oddHeaders,
  })
  .map((parts) =>
    assemble({
      family: 'unknown-route',
      method: parts.method,
      target: parts.path + (parts.query ?? ''),
      key: parts.key,
      extra: parts.extra,
      body: { kind: 'none' },
    }),
  );

/** Raw non-ASCII bytes (and DEL) in the request target, anywhere on any route. */
const rawTargetRequest = fc
  .record({
    base: fc.constantFrom('/v1/chat/completions', '/v1/models', '/v1/configs', '/v1/logs/', '/v1/', '/'),
    where: fc.constantFrom('path', 'query'),
    text: fc.oneof(rawNonAscii, fc.constant('\u007f')),
    method: method(['GET', 'POST']),
    key: gatewayKey,
  })
  .map((parts) =>
    assemble({
      family: 'raw-target',
      method: parts.method,
      target: parts.where === 'path' ? `${parts.base}${parts.base.endsWith('/') ? '' : '/'}${parts.text}` : `${parts.base}?q=${parts.text}`,
      key: parts.key,
      headers: [['x-gateway-provider', 'openai']],
      extra: [],
      body: { kind: 'none' },
    }),
  );

// ---------------------------------------------------------------------------------------------
// Stored secrets: a saved config's key or a saved check's headers never go where a request or an
// edit that keeps them points (the fake counts every request carrying them outside /home/).

const attackerHost = '{{fake}}/attacker/v1';

/** Mostly keys of the workspace that owns the fixtures: a refusal for a bad key proves nothing here. */
const ownKey = fc.oneof(
  { weight: 3, arbitrary: fc.constant<[KeyKind, Array<[string, string]>]>(['admin', [['x-gateway-api-key', '{{admin}}']]]) },
  { weight: 3, arbitrary: fc.constant<[KeyKind, Array<[string, string]>]>(['member', [['x-gateway-api-key', '{{member}}']]]) },
  { weight: 1, arbitrary: gatewayKey },
);

/** Present in `weight` of `weight + absent` requests. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, weight: number, absent: number) =>
  fc.oneof({ weight, arbitrary }, { weight: absent, arbitrary: fc.constant(undefined) });

const redirectingHeaders = fc
  .record({
    customHost: sometimes(
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(attackerHost) },
        { weight: 1, arbitrary: fc.constantFrom('{{fake}}/home/v1', '{{fake}}/home/v1/', '{{refused}}/v1', 'not a url') },
      ),
      3,
      1,
    ),
    provider: sometimes(fc.constantFrom('openai', 'anthropic', '@fuzz-openai', '@missing'), 1, 2),
    virtualKey: sometimes(fc.constantFrom('fuzz-openai', 'missing'), 1, 5),
    cloud: sometimes(
      fc.constantFrom<[string, string]>(
        ['x-gateway-clouda-region', 'us-east-1'],
        ['x-gateway-cloudb-project-id', 'p'],
        ['x-gateway-cloudc-resource-name', 'r'],
      ),
      1,
      4,
    ),
    authorization: sometimes(fc.constant('Bearer sk-client-own'), 1, 1),
  })
  .map((picked) => {
    const headers: Array<[string, string]> = [];
    if (picked.customHost !== undefined) headers.push(['x-gateway-custom-host', picked.customHost]);
    if (picked.provider !== undefined) headers.push(['x-gateway-provider', picked.provider]);
    if (picked.virtualKey !== undefined) headers.push(['x-gateway-virtual-key', picked.virtualKey]);
    if (picked.cloud !== undefined) headers.push(picked.cloud);
    if (picked.authorization !== undefined) headers.push(['authorization', picked.authorization]);
    return headers;
  });

const storedSecretChat = fc
  .record({
    config: fc.constantFrom('{{homeConfig}}', '{{legacyConfig}}', '{{movableConfig}}'),
    headers: redirectingHeaders,
    key: ownKey,
    stream: fc.boolean(),
  })
  .map((parts) =>
    assemble({
      family: 'stored-secrets',
      method: 'POST',
      target: '/v1/chat/completions',
      key: parts.key,
      headers: [['x-gateway-config', parts.config], ...parts.headers],
      extra: [],
      body: jsonBody({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: parts.stream }),
      contentType: 'application/json',
      mustRefuse: parts.headers.some(([name, value]) => name === 'x-gateway-custom-host' && value === attackerHost)
        ? "a saved config's key may not go to a host the request names"
        : undefined,
    }),
  );

const mask = '********';
/** The movable config as GET shows it, and edits of it: moves keep a masked key while its destination changes. */
const movableMasked = () => ({
  strategy: { mode: 'fallback' },
  custom_host: '{{fake}}/home/v1',
  targets: [
    { provider: 'openai', api_key: mask },
    { provider: 'groq', api_key: mask },
  ],
});
const configEdits: Array<[string, () => Record<string, any>]> = [
  ['a new inherited host', () => ({ ...movableMasked(), custom_host: attackerHost })],
  [
    'a new own host',
    () => {
      const c = movableMasked();
      c.targets[0] = { ...c.targets[0]!, custom_host: attackerHost } as any;
      return c;
    },
  ],
  [
    'swapped targets',
    () => {
      const c = movableMasked();
      c.targets.reverse();
      return c;
    },
  ],
  [
    'another provider',
    () => {
      const c = movableMasked();
      c.targets[1] = { ...c.targets[1]!, provider: 'together-ai' };
      return c;
    },
  ],
  [
    'a catalog entry',
    () => {
      const c = movableMasked();
      c.targets[0] = { ...c.targets[0]!, provider: '@fuzz-openai' };
      return c;
    },
  ],
];
const guardrailEdits: Array<[string, Record<string, unknown>]> = [
  ['a new webhook URL', { id: 'default.webhook', parameters: { webhookURL: `${attackerHost}/hook`, headers: mask } }],
  ['the log check on another URL', { id: 'default.log', parameters: { logURL: `${attackerHost}/log`, headers: mask } }],
];

const storedSecretEdit = fc.record({ which: fc.constantFrom('config', 'guardrail'), index: fc.nat(), key: ownKey }).map((parts) => {
  const config = parts.which === 'config';
  const edits = config ? configEdits : guardrailEdits;
  const [what, edit] = edits[parts.index % edits.length]!;
  const body = config ? { config: (edit as () => unknown)() } : { name: 'fuzz webhook', checks: [edit] };
  return assemble({
    family: 'stored-secrets',
    method: 'PUT',
    target: config ? '/v1/configs/{{movableConfig}}' : '/v1/guardrails/{{webhookGuardrail}}',
    key: parts.key,
    extra: [],
    body: jsonBody(body),
    contentType: 'application/json',
    mustRefuse: `an edit that keeps a masked secret may not move it (${what})`,
  });
});

const storedSecretsRequest = fc.oneof({ weight: 3, arbitrary: storedSecretChat }, { weight: 1, arbitrary: storedSecretEdit });

// ---------------------------------------------------------------------------------------------
// Durations: every timeout a request or a config can set is range-checked (Node fires timers past
// 2^31 ms at once), and a request timeout never exceeds the inference functions' 900 s.

const pastLimit = fc.constantFrom(2 ** 31, 2 ** 31 + 1, 2 ** 32, 900_001, 1e12, Number.MAX_SAFE_INTEGER);
const withinLimit = fc.constantFrom(1_000, 60_000, 900_000);

const durationsRequest = fc
  .record({
    where: fc.constantFrom('header', 'inline', 'saved', 'cooldown', 'webhook'),
    value: fc.oneof({ weight: 3, arbitrary: pastLimit }, { weight: 1, arbitrary: withinLimit }),
    key: ownKey,
  })
  .map((parts) => {
    const tooLong = parts.value > 900_000;
    const target = { provider: 'openai', api_key: 'sk', custom_host: '{{fake}}/p/openai/v1' };
    const chat = jsonBody({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const refuse = (what: string, refused: boolean) => (refused ? `${what} of ${parts.value} ms is past its limit` : undefined);
    const common = { family: 'durations' as const, key: parts.key, extra: [], contentType: 'application/json' };
    switch (parts.where) {
      case 'header':
        return assemble({
          ...common,
          method: 'POST',
          target: '/v1/chat/completions',
          headers: [
            ['x-gateway-config', headerJson(target)],
            ['x-gateway-request-timeout', String(parts.value)],
          ],
          body: chat,
          mustRefuse: refuse('x-gateway-request-timeout', tooLong),
        });
      case 'inline':
        return assemble({
          ...common,
          method: 'POST',
          target: '/v1/chat/completions',
          headers: [['x-gateway-config', headerJson({ ...target, request_timeout: parts.value })]],
          body: chat,
          mustRefuse: refuse('request_timeout', tooLong),
        });
      case 'saved':
        return assemble({
          ...common,
          method: 'POST',
          target: '/v1/configs',
          body: jsonBody({ name: 'fuzz duration', config: { ...target, request_timeout: parts.value } }),
          mustRefuse: refuse('request_timeout', tooLong),
        });
      case 'cooldown':
        return assemble({
          ...common,
          method: 'POST',
          target: '/v1/configs',
          body: jsonBody({ name: 'fuzz cooldown', config: { ...target, cb_config: { failure_threshold: 1, cooldown_interval: parts.value } } }),
          mustRefuse: refuse('cb_config.cooldown_interval', parts.value > 86_400_000),
        });
      default:
        return assemble({
          ...common,
          method: 'POST',
          target: '/v1/guardrails',
          body: jsonBody({
            name: 'fuzz webhook timeout',
            checks: [{ id: 'default.webhook', parameters: { webhookURL: '{{fake}}/home/hook', timeout: parts.value } }],
          }),
          mustRefuse: refuse('the webhook timeout', tooLong),
        });
    }
  });

// ---------------------------------------------------------------------------------------------
// Prompts: partials that loop or nest too deep are refused when saved, renders are bounded in
// depth, size and work, and variables are data (fixtures: fz_b includes fz_a; fz_d9 … fz_d0 double).

const admin: [KeyKind, Array<[string, string]>] = ['admin', [['x-gateway-api-key', '{{admin}}']]];
/** The render limit; fz_d9 prints `v` 512 times. */
const renderLimitBytes = 1024 * 1024;

const hostileVariable = fc.oneof(
  fc.constantFrom<unknown>(
    { toString: 'x', valueOf: 1 },
    { toJSON: 'x' },
    JSON.parse('{"__proto__": {"polluted": true}}'),
    { constructor: { prototype: 1 } },
    null,
    7,
    true,
    [],
  ),
  fc.integer({ min: 0, max: 5_000 }).map((length) => Array.from({ length }, (_, index) => index)),
  fc.integer({ min: 40, max: 400 }).map((depth) => {
    let value: unknown = 'leaf';
    for (let level = 0; level < depth; level++) value = { a: value };
    return value;
  }),
  fc.integer({ min: 1, max: 20_000 }).map((length) => 'w'.repeat(length)),
);

const promptRoute = fc.constantFrom('render', 'completions');

/** A render or a run of a saved prompt (a run goes to the fake's openai path). */
const promptRun = (prompt: string, route: string, key: [KeyKind, Array<[string, string]>], variables: Record<string, unknown>, mustRefuse?: string) =>
  assemble({
    family: 'prompts',
    method: 'POST',
    target: `/v1/prompts/${prompt}/${route}`,
    key,
    headers:
      route === 'completions'
        ? [
            ['x-gateway-provider', 'openai'],
            ['authorization', 'Bearer sk'],
            ['x-gateway-custom-host', '{{fake}}/p/openai/v1'],
          ]
        : [],
    extra: [],
    body: jsonBody({ variables }),
    contentType: 'application/json',
    mustRefuse,
  });

const promptsRequest = fc.oneof(
  // A partial that includes itself, or closes the loop fz_a → fz_b → fz_a.
  fc.record({ n: fc.nat(1_000), form: fc.constantFrom('self', 'self-in-section', 'close-loop', 'put-self') }).map(({ n, form }) => {
    const name = `fz_self_${n}`;
    const bodies = {
      self: ['POST', '/v1/prompts/partials', { name, string: `again {{>${name}}}` }],
      'self-in-section': ['POST', '/v1/prompts/partials', { name, string: `{{#more}}{{>${name}}}{{/more}}` }],
      'close-loop': ['POST', '/v1/prompts/partials', { name: 'fz_a', string: 'A then {{>fz_b}}' }],
      'put-self': ['PUT', '/v1/prompts/partials/fz_b', { string: 'B then {{>fz_b}}' }],
    } as const;
    const [verb, path, body] = bodies[form];
    return assemble({
      family: 'prompts',
      method: verb,
      target: path,
      key: admin,
      extra: [],
      body: jsonBody(body),
      contentType: 'application/json',
      mustRefuse: 'a partial may not include itself, directly or through others',
    });
  }),
  // Sections nested around a text: at most 50 levels.
  fc.record({ depth: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 61, max: 5_000 })), partial: fc.boolean() }).map(({ depth, partial }) => {
    const string = '{{#a}}'.repeat(depth) + 'x' + '{{/a}}'.repeat(depth);
    const body = partial ? { name: `fz_deep_${depth}`, string } : { name: `fz deep ${depth}`, model: 'gpt-4o-mini', string };
    return assemble({
      family: 'prompts',
      method: 'POST',
      target: partial ? '/v1/prompts/partials' : '/v1/prompts',
      key: admin,
      extra: [],
      body: jsonBody(body),
      contentType: 'application/json',
      mustRefuse: depth > 50 ? `${depth} nested sections are past the limit of 50` : undefined,
    });
  }),
  // Doubling partials: 512 copies of v, past 1 MB once v is longer than 2 KB. Renders let through stay
  // under 256 KB, so the run measures what the gateway keeps, not the churn of 1 MB prompts.
  fc
    .record({
      length: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 1, max: 500 }) }, { weight: 1, arbitrary: fc.integer({ min: 2_100, max: 8_000 }) }),
      route: promptRoute,
      key: ownKey,
    })
    .map(({ length, route, key }) =>
      promptRun(
        '{{doublingPrompt}}',
        route,
        key,
        { v: 'v'.repeat(length) },
        length * 512 > renderLimitBytes ? `${length * 512} bytes of rendered text are past the 1 MB limit` : undefined,
      ),
    ),
  // Variables as data: objects with toString, prototype keys, long lists, deep objects, long text.
  fc
    .record({ name: hostileVariable, items: hostileVariable, route: promptRoute, key: ownKey })
    .map(({ name, items, route, key }) => promptRun('{{plainPrompt}}', route, key, { name, items })),
);

// ---------------------------------------------------------------------------------------------
// Guardrail checks: pathological schemas, lists and patterns over large texts are refused or stop
// on their budget well within a tight deadline, and a deny hook never passes text it did not read.

/**
 * Far under the usual 15 s: a check that ran unbounded would take seconds to minutes here. Texts
 * stay near 300 KB, which passes every step budget many times over, except where the scan limit
 * itself is the point (the 1 MB inputs are the unit tests' and bench/check-bounds.ts's), so the
 * run's memory measures what the gateway keeps, not the churn of many 1 MB bodies.
 */
const boundedCheckDeadlineMs = 5_000;

const chatWith = (content: string) => jsonBody({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
const chatRepeating = (fill: string, times: number, suffix = '') =>
  ({ kind: 'repeat', prefix: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"', fill, times, suffix: `${suffix}"}]}` }) as BodyPlan;

const checkCase: fc.Arbitrary<{ check: Record<string, unknown>; body: BodyPlan; mustRefuse?: string }> = fc.oneof(
  fc.integer({ min: 8, max: 40 }).map((levels) => {
    return {
      check: { id: 'default.jsonSchema', parameters: { schema: doublingSchema(levels) } },
      body: chatWith('1'),
      mustRefuse: levels >= 14 ? `a schema expanding to 2^${levels} subschemas is past the 10,000 limit` : undefined,
    };
  }),
  fc.integer({ min: 10, max: 60 }).map((depth) => ({
    check: { id: 'default.jsonSchema', parameters: { schema: recursiveTwice } },
    body: chatWith(nestedArrays(depth)),
  })),
  fc.integer({ min: 1_000, max: 20_000 }).map((count) => ({
    check: { id: 'default.jsonSchema', parameters: { schema: { type: 'array', uniqueItems: true } } },
    body: chatWith(JSON.stringify(Array.from({ length: count }, (_, index) => ({ k: index })))),
  })),
  fc.integer({ min: 10_000, max: 100_000 }).map((times) => ({
    check: { id: 'default.contains', parameters: { words: Array.from({ length: 1_000 }, (_, index) => `ab${index}x`), operator: 'any' } },
    body: chatRepeating('ab ', times),
  })),
  fc
    .integer({ min: 10_000, max: 150_000 })
    .map((times) => ({ check: { id: 'default.regexMatch', parameters: { rule: '[ab]*a[ab]{300}c' } }, body: chatRepeating('ab', times) })),
  fc.constantFrom('default.regexMatch', 'default.contains', 'default.pii').map((id) => ({
    check: {
      id,
      parameters: id === 'default.regexMatch' ? { rule: 'secret', not: true } : id === 'default.contains' ? { words: ['secret'], operator: 'none' } : {},
    },
    body: chatRepeating(' ', 1_000_001, 'my secret is sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa and me@example.com'),
    mustRefuse: 'a deny hook may not pass text past the scan limit it did not read',
  })),
);

const guardrailChecksRequest = fc.record({ checkCase, failOnError: fc.boolean(), key: ownKey }).map(({ checkCase: picked, failOnError, key }) => {
  const check = { ...picked.check, parameters: { ...(picked.check.parameters as object), failOnError } };
  const config = {
    provider: 'openai',
    api_key: 'sk',
    custom_host: '{{fake}}/p/openai/v1',
    before_request_hooks: [{ id: 'fuzz-bounded', deny: true, checks: [check] }],
  };
  return assemble({
    family: 'guardrail-checks',
    method: 'POST',
    target: '/v1/chat/completions',
    key,
    headers: [['x-gateway-config', headerJson(config)]],
    extra: [],
    body: picked.body,
    contentType: 'application/json',
    mustRefuse: picked.mustRefuse,
    deadlineMs: boundedCheckDeadlineMs,
  });
});

/** One request of any family. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 8, arbitrary: unifiedRequest('chat') },
  { weight: 3, arbitrary: unifiedRequest('completions') },
  { weight: 3, arbitrary: unifiedRequest('embeddings') },
  { weight: 2, arbitrary: passthroughRequest('responses') },
  { weight: 6, arbitrary: passthroughRequest('passthrough') },
  { weight: 3, arbitrary: configsRequest },
  { weight: 2, arbitrary: providersRequest },
  { weight: 2, arbitrary: apiKeysRequest },
  { weight: 1, arbitrary: logsRequest },
  { weight: 1, arbitrary: traceRequest },
  { weight: 1, arbitrary: unknownRouteRequest },
  { weight: 1, arbitrary: rawTargetRequest },
  { weight: 2, arbitrary: storedSecretsRequest },
  { weight: 1, arbitrary: durationsRequest },
  { weight: 2, arbitrary: promptsRequest },
  { weight: 1, arbitrary: guardrailChecksRequest },
);

/** The key a request authenticates with (the last `x-gateway-api-key` header wins, as API Gateway keeps it). */
export function keyKindOf(request: FuzzRequest): KeyKind {
  const values = request.headers.filter(([name]) => name.toLowerCase() === 'x-gateway-api-key').map(([, value]) => value);
  if (values.length === 0) return 'missing';
  const last = values[values.length - 1];
  if (last === '{{admin}}') return 'admin';
  if (last === '{{member}}') return 'member';
  return 'garbage';
}

/** Whether the sent body is a JSON object asking for a stream. */
export function asksForStream(request: FuzzRequest): boolean {
  if (request.body.kind !== 'text') return false;
  try {
    const parsed = JSON.parse(request.body.text) as unknown;
    return typeof parsed === 'object' && parsed !== null && (parsed as Record<string, unknown>).stream === true;
  } catch {
    return false;
  }
}

/** Fixed requests that load every function and adapter once before the baseline RSS is read. */
export function warmUpRequests(): FuzzRequest[] {
  const admin: [KeyKind, Array<[string, string]>] = ['admin', [['x-gateway-api-key', '{{admin}}']]];
  const json = (value: unknown): BodyPlan => jsonBody(value);
  const chat = (stream: boolean) => json({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream });
  const requests: FuzzRequest[] = [];
  for (const provider of ['openai', 'anthropic', 'google', 'cohere', 'azure-ai', 'mistral-ai']) {
    for (const stream of [false, true]) {
      requests.push(
        assemble({
          family: 'chat',
          method: 'POST',
          target: '/v1/chat/completions',
          key: admin,
          headers: [
            ['x-gateway-provider', provider],
            ['authorization', 'Bearer sk'],
            ['x-gateway-trace-id', 'fuzz-trace-known'],
          ],
          extra: [],
          body: chat(stream),
          contentType: 'application/json',
        }),
      );
    }
  }
  requests.push(
    assemble({
      family: 'chat',
      method: 'POST',
      target: '/v1/chat/completions',
      key: admin,
      headers: [['x-gateway-provider', '@fuzz-bedrock']],
      extra: [],
      body: chat(true),
      contentType: 'application/json',
    }),
  );
  requests.push(
    assemble({
      family: 'chat',
      method: 'POST',
      target: '/v1/chat/completions',
      key: admin,
      headers: [['x-gateway-provider', '@fuzz-vertex']],
      extra: [],
      body: chat(false),
      contentType: 'application/json',
    }),
  );
  requests.push(
    assemble({
      family: 'completions',
      method: 'POST',
      target: '/v1/completions',
      key: admin,
      headers: [
        ['x-gateway-provider', 'openai'],
        ['authorization', 'Bearer sk'],
      ],
      extra: [],
      body: json({ model: 'gpt-3.5-turbo-instruct', prompt: 'hi', stream: true }),
      contentType: 'application/json',
    }),
  );
  requests.push(
    assemble({
      family: 'embeddings',
      method: 'POST',
      target: '/v1/embeddings',
      key: admin,
      headers: [
        ['x-gateway-provider', 'openai'],
        ['authorization', 'Bearer sk'],
      ],
      extra: [],
      body: json({ model: 'text-embedding-3-small', input: ['a', 'b'] }),
      contentType: 'application/json',
    }),
  );
  requests.push(
    assemble({
      family: 'passthrough',
      method: 'GET',
      target: '/v1/models',
      key: admin,
      headers: [
        ['x-gateway-provider', 'openai'],
        ['authorization', 'Bearer sk'],
      ],
      extra: [],
      body: { kind: 'none' },
    }),
  );
  requests.push(
    assemble({
      family: 'chat',
      method: 'POST',
      target: '/v1/chat/completions',
      key: admin,
      headers: [['x-gateway-config', '{{savedConfig}}']],
      extra: [],
      body: chat(false),
      contentType: 'application/json',
    }),
  );
  for (const target of ['/v1/configs', '/v1/providers', '/v1/api-keys', '/v1/logs', '/v1/logs/fuzz-trace-known', '/v1/configs/{{savedConfig}}', '/']) {
    requests.push(assemble({ family: 'configs', method: 'GET', target, key: admin, extra: [], body: { kind: 'none' } }));
  }
  return requests;
}
