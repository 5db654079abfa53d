import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configError, parseConfig as parseConfigWith, parseConfigHeader, parseConfigLoadingChecks } from '../../lib/config/schema';
import type { ConfigIssue } from '../../lib/config/types';
import { checkIssues } from '../../lib/guardrails/validate-checks';

const parseConfig = (input: unknown) => parseConfigWith(input, checkIssues);

const base = { provider: 'openai', api_key: 'sk-test' };

function issuesOf(input: unknown): ConfigIssue[] {
  const result = parseConfig(input);
  if (result.ok) throw new Error(`expected the config to be rejected: ${JSON.stringify(input)}`);
  return result.issues;
}

function expectAccepted(input: unknown) {
  const result = parseConfig(input);
  expect(result.ok ? [] : result.issues).toEqual([]);
  expect(result.ok && result.config).toEqual(input);
}

const combinationMessage =
  'needs at least one of: provider (its key in api_key or in the Authorization header), virtual_key, strategy + targets, cache, retry, prompt_id, forward_headers, request_timeout, before_request_hooks, after_request_hooks, input_guardrails, output_guardrails';
const statusCodeMessage = 'an HTTP status code: an integer from 100 to 599';
const twoTargets = [
  { name: 'a', provider: 'openai' },
  { name: 'b', provider: 'anthropic' },
];

describe('parseConfig: accepted configs', () => {
  const accepted: [string, unknown][] = [
    ['provider + api_key', base],
    ['provider alone (the key comes from the Authorization header)', { provider: 'openai' }],
    ['a provider slug', { provider: '@openai-prod' }],
    ['virtual_key', { virtual_key: 'vk-1' }],
    [
      'a conditional strategy with every query operator',
      {
        strategy: {
          mode: 'conditional',
          conditions: [
            {
              query: {
                $or: [{ 'metadata.tier': { $in: ['pro'] } }, { $and: [{ 'params.model': { $regex: '^(x+x+)+y$' } }, { 'url.pathname': { $ne: '/' } }] }],
              },
              then: 'a',
            },
            { query: { 'params.max_tokens': { $gte: 1, $lt: 10 }, 'params.user': { $exists: false }, 'metadata.n': { $nin: [1] } }, then: 'b' },
          ],
          default: 'a',
        },
        targets: twoTargets,
      },
    ],
    ['strategy + targets', { strategy: { mode: 'fallback' }, targets: [base, { provider: 'anthropic' }] }],
    ['cache alone', { cache: { mode: 'simple' } }],
    ['retry alone', { retry: { attempts: 2 } }],
    ['prompt_id alone', { prompt_id: 'pp-1' }],
    ['forward_headers alone', { forward_headers: ['x-custom'] }],
    ['request_timeout alone', { request_timeout: 1 }],
    ['before_request_hooks alone', { before_request_hooks: [{ id: 'h1' }] }],
    ['after_request_hooks alone', { after_request_hooks: [{ id: 'h1' }] }],
    ['input_guardrails alone', { input_guardrails: ['g1'] }],
    ['output_guardrails alone', { output_guardrails: ['g1'] }],
    ['provider + custom_host', { provider: 'openai', custom_host: 'http://localhost:11434/v1' }],
    [
      'cloudA credentials',
      { provider: 'bedrock', cloudA_access_key_id: 'AK', cloudA_secret_access_key: 'SK', cloudA_region: 'us-east-1', cloudA_session_token: 't' },
    ],
    ['cloudB service account', { provider: 'vertex-ai', cloudB_region: 'us-central1', cloudB_service_account_json: { type: 'service_account' } }],
    ['cloudB project', { provider: 'vertex-ai', cloudB_region: 'us-central1', cloudB_project_id: 'p' }],
    [
      'cloudC deployment',
      { provider: 'azure-ai', cloudC_deployment_name: 'd', cloudC_deployment_type: 'managed', cloudC_region: 'eastus', cloudC_api_version: '2024-05-01' },
    ],
    ['cloudC endpoint', { provider: 'azure-ai', cloudC_endpoint_name: 'e', cloudC_deployment_type: 'serverless' }],
    [
      'cloudC resource fields',
      { provider: 'azure-openai', cloudC_resource_name: 'r', cloudC_deployment_id: 'd', cloudC_model_name: 'm', cloudC_entra_scope: 's' },
    ],
    [
      'deployments',
      {
        ...base,
        resource_name: 'r',
        deployment_id: 'd',
        api_version: 'v',
        deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', is_default: true }],
      },
    ],
    ['a nested target needs no combination of its own', { strategy: { mode: 'fallback' }, targets: [{ api_key: 'only-a-key' }, { weight: 2 }] }],
    ['retry attempts 0 and status codes at both ends', { retry: { attempts: 0, on_status_codes: [100, 599], use_retry_after_headers: true } }],
    ['retry attempts 5', { retry: { attempts: 5 } }],
    ['cb_config at its minimums', { ...base, cb_config: { failure_threshold: 1, cooldown_interval: 30000, failure_status_codes: [500, 503] } }],
    ['cache semantic at the 90-day max_age', { cache: { mode: 'semantic', max_age: 7776000 } }],
    ['loadbalance with a zero and a missing weight', { strategy: { mode: 'loadbalance' }, targets: [{ ...base, weight: 0 }, base] }],
    [
      'fractional weights',
      {
        strategy: { mode: 'loadbalance' },
        targets: [
          { ...base, weight: 0.25 },
          { ...base, weight: 2.5 },
        ],
      },
    ],
    ['fallback on_status_codes', { strategy: { mode: 'fallback', on_status_codes: [429, 500] }, targets: [{ ...base, on_status_codes: [503] }] }],
    ['single mode with targets', { strategy: { mode: 'single' }, targets: [base] }],
    ['single mode without targets', { ...base, strategy: { mode: 'single' } }],
    [
      'conditional with names',
      { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.tier': { $eq: 'pro' } }, then: 'a' }], default: 'b' }, targets: twoTargets },
    ],
    ['conditional with no conditions', { strategy: { mode: 'conditional', conditions: [], default: 'a' }, targets: twoTargets }],
    ['https custom_host with a path', { provider: 'openai', custom_host: 'https://llm.example.com:8443/openai/v1' }],
    ['forward_headers in any valid token form', { ...base, forward_headers: ['X_My_Custom_Header', 'x-trace', 'Accept'] }],
    ['override_params and strict_api_compliance', { ...base, strict_api_compliance: false, override_params: { model: 'gpt-4o', temperature: 0.2 } }],
    ['compat organization and project', { ...base, compat_organization: 'org', compat_project: 'proj' }],
    [
      'before hook with deny in on_fail',
      {
        before_request_hooks: [
          {
            id: 'h',
            type: 'guardrail',
            checks: [{ id: 'default.contains', parameters: { words: ['x'] } }],
            on_fail: { deny: true, feedback: { value: -1, weight: 1, metadata: { k: 'v' } } },
            on_success: { deny: false },
          },
        ],
      },
    ],
    ['after hook with async', { after_request_hooks: [{ id: 'h', async: true, on_success: { feedback: { value: 1 } } }] }],
    // `deny` and `async` on both sides, and `deny` at a hook's top level as well as in on_fail.
    ['before hook with async and top-level deny', { before_request_hooks: [{ id: 'h', async: true, deny: true }] }],
    ['after hook with deny in on_fail', { after_request_hooks: [{ id: 'h', type: 'mutator', on_fail: { deny: true } }] }],
    ['input guardrail with deny in on_fail', { input_guardrails: [{ id: 'g', on_fail: { deny: true } }] }],
    [
      'guardrail object with check properties',
      { input_guardrails: [{ id: 'g', deny: true, async: false, 'default.contains': { operator: 'any', words: ['a'] }, on_fail: { feedback: { value: 0 } } }] },
    ],
    ['output guardrail with deny in on_fail', { output_guardrails: ['g1', { on_fail: { deny: true }, on_success: { deny: false, feedback: { weight: 2 } } }] }],
    ['name and prompt_id', { ...base, name: 'primary', prompt_id: 'p' }],
  ];
  it.each(accepted)('%s', (_, input) => expectAccepted(input));

  it('accepts targets nested 40 levels deep', () => {
    let config: Record<string, unknown> = base;
    for (let i = 0; i < 40; i++) config = { strategy: { mode: 'fallback' }, targets: [config] };
    expectAccepted(config);
  });

  it('accepts a realistic nested config: fallback of loadbalance of conditional, with every kind of setting', () => {
    expectAccepted({
      name: 'production',
      strategy: { mode: 'fallback', on_status_codes: [429, 500, 502, 503] },
      cache: { mode: 'semantic', max_age: 3600 },
      retry: { attempts: 3, on_status_codes: [429, 503], use_retry_after_headers: true },
      request_timeout: 30000,
      forward_headers: ['x-request-source'],
      override_params: { temperature: 0.3 },
      before_request_hooks: [
        {
          id: 'pii-check',
          type: 'guardrail',
          checks: [{ id: 'default.regexMatch', parameters: { rule: '\\d{16}' } }],
          on_fail: { deny: true, feedback: { value: -10, weight: 1, metadata: { reason: 'pii' } } },
        },
      ],
      after_request_hooks: [{ id: 'json-check', async: true, checks: [{ id: 'default.jsonSchema', parameters: { schema: { type: 'object' } } }] }],
      input_guardrails: ['gr-input-1', { id: 'gr-words', deny: true, 'default.contains': { operator: 'none', words: ['secret'] } }],
      output_guardrails: [{ id: 'gr-out', async: false, on_fail: { deny: false, feedback: { value: 0 } } }],
      targets: [
        {
          strategy: { mode: 'loadbalance' },
          cb_config: { failure_threshold: 5, cooldown_interval: 60000, failure_status_codes: [500, 502, 503, 504] },
          targets: [
            {
              weight: 3,
              strategy: {
                mode: 'conditional',
                conditions: [
                  { query: { 'metadata.tier': { $eq: 'pro' } }, then: 'smart' },
                  { query: { $or: [{ 'params.model': { $regex: '^gpt' } }, { 'url.pathname': { $eq: '/v1/chat/completions' } }] }, then: 'fast' },
                ],
                default: 'fast',
              },
              targets: [
                { name: 'smart', provider: '@openai-prod', override_params: { model: 'gpt-4o' }, retry: { attempts: 1 } },
                { name: 'fast', provider: 'anthropic', api_key: 'sk-ant-test', override_params: { model: 'claude-3-5-haiku', max_tokens: 512 } },
              ],
            },
            { weight: 1, provider: 'bedrock', cloudA_access_key_id: 'AKIA', cloudA_secret_access_key: 'secret', cloudA_region: 'us-east-1' },
            {
              weight: 0,
              provider: 'azure-openai',
              api_key: 'az',
              cloudC_resource_name: 'res',
              deployments: [{ deployment_id: 'gpt4o', alias: 'gpt-4o', api_version: '2024-06-01', is_default: true }],
            },
          ],
        },
        {
          provider: 'vertex-ai',
          cloudB_project_id: 'proj',
          cloudB_region: 'us-central1',
          cloudB_service_account_json: { type: 'service_account', project_id: 'proj' },
        },
        {
          provider: 'azure-ai',
          cloudC_endpoint_name: 'ep',
          cloudC_deployment_type: 'serverless',
          cloudC_region: 'eastus',
          cloudC_api_version: '2024-05-01-preview',
          cloudC_entra_scope: 'https://ml.azure.com/.default',
        },
        {
          provider: 'openai',
          custom_host: 'https://llm.internal.example.com/v1',
          api_key: 'x',
          compat_organization: 'org-1',
          compat_project: 'proj-1',
          strict_api_compliance: false,
          request_timeout: 10000,
        },
      ],
    });
  });
});

describe('parseConfig: each rule rejects with the exact path', () => {
  // [case, config, param, message]
  const rejected: [string, unknown, string, string][] = [
    ['a non-object config', [], 'config', 'must be a JSON object (a config); got an empty array'],
    ['null', null, 'config', 'must be a JSON object (a config); got null'],
    ['an empty config', {}, 'config', combinationMessage],
    ['api_key without provider', { api_key: 'k' }, 'config', combinationMessage],
    ['a mode-only strategy without targets', { strategy: { mode: 'single' } }, 'config', combinationMessage],
    ['unknown property with a close match', { ...base, retries: { attempts: 1 } }, 'config.retries', 'unknown property "retries"; did you mean "retry"?'],
    ['camelCase property', { provider: 'openai', apiKey: 'k' }, 'config.apiKey', 'unknown property "apiKey"; did you mean "api_key"?'],
    ['unknown property without a close match', { ...base, zzz: 1 }, 'config.zzz', 'unknown property "zzz"; it is not a field of the config object'],
    ['model at the config level', { ...base, model: 'gpt-4o' }, 'config.model', 'unknown property "model"; set the model with "override_params": {"model": …}'],
    ['mode at the config level', { ...base, mode: 'fallback' }, 'config.mode', 'unknown property "mode"; the routing mode goes in "strategy": {"mode": …}'],
    [
      'unknown property deep inside',
      { strategy: { mode: 'fallback' }, targets: [base, { ...base, retry: { attempt: 2 } }] },
      'config.targets[1].retry.attempt',
      'unknown property "attempt"; did you mean "attempts"?',
    ],
    [
      'a missing retry.attempts (reported with the unknown one)',
      { retry: { attempt: 2 } },
      'config.retry.attempts',
      'is required; must be an integer from 0 to 5',
    ],
    [
      'strategy not an object',
      { ...base, strategy: 'fallback' },
      'config.strategy',
      'must be an object with `mode` (single, loadbalance, fallback or conditional); got "fallback"',
    ],
    [
      'strategy.mode unknown',
      { strategy: { mode: 'round_robin' }, targets: [base] },
      'config.strategy.mode',
      'must be one of single, loadbalance, fallback, conditional; got "round_robin"',
    ],
    [
      'strategy.mode missing',
      { strategy: {}, targets: [base] },
      'config.strategy.mode',
      'is required; must be one of single, loadbalance, fallback, conditional',
    ],
    [
      'strategy unknown property',
      { strategy: { mode: 'fallback', on_status_code: [500] }, targets: [base] },
      'config.strategy.on_status_code',
      'unknown property "on_status_code"; did you mean "on_status_codes"?',
    ],
    [
      'strategy.on_status_codes above 599',
      { strategy: { mode: 'fallback', on_status_codes: [500, 600] }, targets: [base] },
      'config.strategy.on_status_codes[1]',
      `must be ${statusCodeMessage}; got 600`,
    ],
    [
      'strategy.on_status_codes below 100',
      { strategy: { mode: 'fallback', on_status_codes: [99] }, targets: [base] },
      'config.strategy.on_status_codes[0]',
      `must be ${statusCodeMessage}; got 99`,
    ],
    [
      'strategy.on_status_codes as strings',
      { strategy: { mode: 'fallback', on_status_codes: ['500'] }, targets: [base] },
      'config.strategy.on_status_codes[0]',
      `must be ${statusCodeMessage}; got "500"`,
    ],
    [
      'strategy.on_status_codes not an array',
      { strategy: { mode: 'fallback', on_status_codes: 500 }, targets: [base] },
      'config.strategy.on_status_codes',
      'must be an array of HTTP status codes (integers from 100 to 599); got 500',
    ],
    [
      'target on_status_codes fractional',
      { strategy: { mode: 'fallback' }, targets: [{ ...base, on_status_codes: [500.5] }] },
      'config.targets[0].on_status_codes[0]',
      `must be ${statusCodeMessage}; got 500.5`,
    ],
    ['loadbalance without targets', { strategy: { mode: 'loadbalance' } }, 'config.targets', 'a loadbalance strategy needs a non-empty `targets` array'],
    [
      'fallback with empty targets',
      { strategy: { mode: 'fallback' }, targets: [] },
      'config.targets',
      'a fallback strategy needs a non-empty `targets` array; got an empty array',
    ],
    [
      'nested conditional without targets',
      { strategy: { mode: 'fallback' }, targets: [{ strategy: { mode: 'conditional', conditions: [], default: 'x' } }] },
      'config.targets[0].targets',
      'a conditional strategy needs a non-empty `targets` array',
    ],
    [
      'targets without strategy',
      { ...base, targets: [base] },
      'config.targets',
      '`targets` needs a `strategy` whose mode (loadbalance, fallback, conditional or single) says how to use them',
    ],
    ['targets not an array', { strategy: { mode: 'fallback' }, targets: base }, 'config.targets', 'must be an array of config objects; got an object'],
    [
      'a target that is not an object',
      { strategy: { mode: 'fallback' }, targets: [base, 'openai'] },
      'config.targets[1]',
      'must be a JSON object (a config); got "openai"',
    ],
    [
      'conditional without conditions',
      { strategy: { mode: 'conditional', default: 'a' }, targets: twoTargets },
      'config.strategy.conditions',
      'a conditional strategy needs `conditions`: an array of {"query": {…}, "then": "<target name>"} items',
    ],
    [
      'conditional without default',
      { strategy: { mode: 'conditional', conditions: [] }, targets: twoTargets },
      'config.strategy.default',
      'conditional strategy needs `default` naming one of the targets: a, b',
    ],
    [
      'default naming no target',
      { strategy: { mode: 'conditional', conditions: [], default: 'c' }, targets: twoTargets },
      'config.strategy.default',
      'must name one of the targets: a, b; got "c"',
    ],
    [
      'then naming no target',
      {
        strategy: {
          mode: 'conditional',
          conditions: [
            { query: {}, then: 'a' },
            { query: {}, then: 'z' },
          ],
          default: 'a',
        },
        targets: twoTargets,
      },
      'config.strategy.conditions[1].then',
      'must name one of the targets: a, b; got "z"',
    ],
    [
      'conditional targets without names',
      { strategy: { mode: 'conditional', conditions: [], default: 'a' }, targets: [base] },
      'config.strategy.default',
      'must name a target, but none of the targets has a `name`; add `name` to the targets; got "a"',
    ],
    [
      'duplicate target names in conditional',
      { strategy: { mode: 'conditional', conditions: [], default: 'a' }, targets: [...twoTargets, { name: 'a', provider: 'x' }] },
      'config.targets[2].name',
      'duplicates the name of targets[0]; a conditional strategy needs unique target names; got "a"',
    ],
    [
      'condition without query',
      { strategy: { mode: 'conditional', conditions: [{ then: 'a' }], default: 'a' }, targets: twoTargets },
      'config.strategy.conditions[0].query',
      'is required; must be an object (a query over metadata.*, params.* and url.pathname)',
    ],
    [
      'condition then not a string',
      { strategy: { mode: 'conditional', conditions: [{ query: {}, then: 1 }], default: 'a' }, targets: twoTargets },
      'config.strategy.conditions[0].then',
      'must be a string naming a target; got 1',
    ],
    [
      'condition unknown property',
      { strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a', else: 'b' }], default: 'a' }, targets: twoTargets },
      'config.strategy.conditions[0].else',
      'unknown property "else"; allowed here: query, then',
    ],
    ...((): [string, unknown, string, string][] => {
      const conditional = (query: unknown) => ({ strategy: { mode: 'conditional', conditions: [{ query, then: 'a' }], default: 'a' }, targets: twoTargets });
      const at = 'config.strategy.conditions[0].query';
      const andMessage = 'must be a non-empty array of queries, e.g. [{"metadata.tier": "pro"}, {"params.model": "gpt-4o"}]';
      return [
        ['$and not an array', conditional({ $and: 5 }), `${at}.$and`, `${andMessage}; got 5`],
        ['$or a string', conditional({ $or: 'x' }), `${at}.$or`, `${andMessage}; got "x"`],
        ['$or empty', conditional({ $or: [] }), `${at}.$or`, `${andMessage}; got an empty array`],
        ['$and holding null', conditional({ $and: [null] }), `${at}.$and[0]`, 'must be a query object, e.g. {"metadata.tier": "pro"}; got null'],
        [
          'nested $or inside $and',
          conditional({ $and: [{ $or: [{ 'params.model': 'x' }, 7] }] }),
          `${at}.$and[0].$or[1]`,
          'must be a query object, e.g. {"metadata.tier": "pro"}; got 7',
        ],
        [
          'an unknown top-level operator',
          conditional({ $nor: [] }),
          `${at}.$nor`,
          "is not an operator that can stand here; a query's keys are $and, $or or a field (metadata.<key>, params.<path> or url.pathname)",
        ],
        [
          'a field without its root',
          conditional({ model: 'gpt-4o' }),
          `${at}.model`,
          'is not a field a query can test; use metadata.<key>, params.<path> or url.pathname',
        ],
        [
          'a prototype key as a field',
          conditional(JSON.parse('{"__proto__": {"$eq": 1}}')),
          `${at}.__proto__`,
          'is not a field a query can test; use metadata.<key>, params.<path> or url.pathname',
        ],
        [
          'an unknown operator',
          conditional({ 'params.model': { $regexp: 'x' } }),
          `${at}["params.model"].$regexp`,
          'is an unknown operator; use one of $eq $ne $gt $gte $lt $lte $in $nin $regex $exists',
        ],
        ['$in not an array', conditional({ 'metadata.tier': { $in: 'pro' } }), `${at}["metadata.tier"].$in`, 'must be an array of values; got "pro"'],
        ['$exists not a boolean', conditional({ 'metadata.tier': { $exists: 'yes' } }), `${at}["metadata.tier"].$exists`, 'must be true or false; got "yes"'],
        [
          '$regex not a string',
          conditional({ 'params.model': { $regex: 5 } }),
          `${at}["params.model"].$regex`,
          'must be a regular expression written as a string; got 5',
        ],
        [
          '$regex that does not compile',
          conditional({ 'params.model': { $regex: '(' } }),
          `${at}["params.model"].$regex`,
          'must be a regular expression (JavaScript syntax, without back-references or lookaround); this one has an unterminated group: a "(" without its ")"',
        ],
        [
          '$regex with a back-reference',
          conditional({ 'params.model': { $regex: '(a)\\1' } }),
          `${at}["params.model"].$regex`,
          'must be a regular expression (JavaScript syntax, without back-references or lookaround); this one uses a back-reference, which needs backtracking and is not supported',
        ],
      ];
    })(),
    [
      'all-zero loadbalance weights',
      {
        strategy: { mode: 'loadbalance' },
        targets: [
          { ...base, weight: 0 },
          { ...base, weight: 0 },
        ],
      },
      'config.targets',
      'a loadbalance strategy needs at least one target with weight > 0 (a missing weight counts as 1); all 2 weights are 0',
    ],
    [
      'negative weight',
      { strategy: { mode: 'loadbalance' }, targets: [{ ...base, weight: -1 }] },
      'config.targets[0].weight',
      'must be a number of 0 or more (a missing weight counts as 1); got -1',
    ],
    [
      'weight as a string',
      { strategy: { mode: 'loadbalance' }, targets: [{ ...base, weight: '1' }] },
      'config.targets[0].weight',
      'must be a number of 0 or more (a missing weight counts as 1); got "1"',
    ],
    ['retry.attempts above 5', { retry: { attempts: 9 } }, 'config.retry.attempts', 'must be an integer from 0 to 5; got 9'],
    ['retry.attempts 6', { retry: { attempts: 6 } }, 'config.retry.attempts', 'must be an integer from 0 to 5; got 6'],
    [
      'circuit_breaker at the config level',
      { ...base, circuit_breaker: {} },
      'config.circuit_breaker',
      'unknown property "circuit_breaker"; did you mean "cb_config"?',
    ],
    ['retry.attempts negative', { retry: { attempts: -1 } }, 'config.retry.attempts', 'must be an integer from 0 to 5; got -1'],
    ['retry.attempts fractional', { retry: { attempts: 1.5 } }, 'config.retry.attempts', 'must be an integer from 0 to 5; got 1.5'],
    ['retry.attempts as a string', { retry: { attempts: '3' } }, 'config.retry.attempts', 'must be an integer from 0 to 5; got "3"'],
    [
      'retry.on_status_codes out of range',
      { retry: { attempts: 1, on_status_codes: [429, 700] } },
      'config.retry.on_status_codes[1]',
      `must be ${statusCodeMessage}; got 700`,
    ],
    [
      'retry.use_retry_after_headers not boolean',
      { retry: { attempts: 1, use_retry_after_headers: 'yes' } },
      'config.retry.use_retry_after_headers',
      'must be true or false; got "yes"',
    ],
    [
      'retry unknown property',
      { retry: { attempts: 1, backoff: 2 } },
      'config.retry.backoff',
      'unknown property "backoff"; allowed here: attempts, on_status_codes, use_retry_after_headers',
    ],
    [
      'cb_config.failure_threshold 0',
      { ...base, cb_config: { failure_threshold: 0, cooldown_interval: 30000 } },
      'config.cb_config.failure_threshold',
      'must be a number of at least 1; got 0',
    ],
    [
      'cb_config.cooldown_interval below 30000',
      { ...base, cb_config: { failure_threshold: 3, cooldown_interval: 29999 } },
      'config.cb_config.cooldown_interval',
      'must be a number of milliseconds from 30000 to 86400000 (a day); got 29999',
    ],
    [
      'cb_config.cooldown_interval above a day',
      { ...base, cb_config: { failure_threshold: 3, cooldown_interval: 2 ** 31 } },
      'config.cb_config.cooldown_interval',
      'must be a number of milliseconds from 30000 to 86400000 (a day); got 2147483648',
    ],
    [
      'cb_config.cooldown_interval missing',
      { ...base, cb_config: { failure_threshold: 3 } },
      'config.cb_config.cooldown_interval',
      'is required; must be a number of milliseconds from 30000 to 86400000 (a day)',
    ],
    [
      'cb_config.failure_status_codes out of range',
      { ...base, cb_config: { failure_threshold: 3, cooldown_interval: 30000, failure_status_codes: [1000] } },
      'config.cb_config.failure_status_codes[0]',
      `must be ${statusCodeMessage}; got 1000`,
    ],
    ['cache.mode unknown', { cache: { mode: 'exact' } }, 'config.cache.mode', 'must be one of simple, semantic; got "exact"'],
    ['cache.mode missing', { cache: { max_age: 60 } }, 'config.cache.mode', 'is required; must be one of simple, semantic'],
    [
      'cache.max_age 0',
      { cache: { mode: 'simple', max_age: 0 } },
      'config.cache.max_age',
      'must be a positive integer number of seconds, at most 7776000 (90 days); got 0',
    ],
    [
      'cache.max_age above 90 days',
      { cache: { mode: 'simple', max_age: 7776001 } },
      'config.cache.max_age',
      'must be a positive integer number of seconds, at most 7776000 (90 days); got 7776001',
    ],
    [
      'cache.max_age fractional',
      { cache: { mode: 'simple', max_age: 1.5 } },
      'config.cache.max_age',
      'must be a positive integer number of seconds, at most 7776000 (90 days); got 1.5',
    ],
    ['cache unknown property', { cache: { mode: 'simple', maxAge: 10 } }, 'config.cache.maxAge', 'unknown property "maxAge"; did you mean "max_age"?'],
    [
      'request_timeout 0',
      { request_timeout: 0 },
      'config.request_timeout',
      `must be an integer number of milliseconds from 1 to 900000 (the inference functions' own timeout); got 0`,
    ],
    [
      'request_timeout fractional',
      { request_timeout: 1.5 },
      'config.request_timeout',
      `must be an integer number of milliseconds from 1 to 900000 (the inference functions' own timeout); got 1.5`,
    ],
    [
      'request_timeout as a string',
      { request_timeout: '1000' },
      'config.request_timeout',
      `must be an integer number of milliseconds from 1 to 900000 (the inference functions' own timeout); got "1000"`,
    ],
    [
      "request_timeout past the functions' timeout",
      { request_timeout: 900_001 },
      'config.request_timeout',
      `must be an integer number of milliseconds from 1 to 900000 (the inference functions' own timeout); got 900001`,
    ],
    [
      'request_timeout past 2^31 ms',
      { request_timeout: 2 ** 31 },
      'config.request_timeout',
      `must be an integer number of milliseconds from 1 to 900000 (the inference functions' own timeout); got 2147483648`,
    ],
    [
      'cloudC_deployment_type unknown',
      { provider: 'azure-ai', cloudC_deployment_type: 'dedicated' },
      'config.cloudC_deployment_type',
      'must be one of serverless, managed; got "dedicated"',
    ],
    [
      'custom_host with another scheme',
      { provider: 'openai', custom_host: 'ftp://example.com' },
      'config.custom_host',
      'must be an http:// or https:// URL (the base URL of the provider); got "ftp://example.com"',
    ],
    [
      'custom_host not a URL',
      { provider: 'openai', custom_host: 'llm.example.com' },
      'config.custom_host',
      'must be an http:// or https:// URL (the base URL of the provider); got "llm.example.com"',
    ],
    [
      'custom_host not a string',
      { provider: 'openai', custom_host: 5 },
      'config.custom_host',
      'must be an http:// or https:// URL (the base URL of the provider); got 5',
    ],
    [
      'forward_headers with a space',
      { forward_headers: ['x-ok', 'bad header'] },
      'config.forward_headers[1]',
      'must be a valid HTTP header name (letters, digits and !#$%&\'*+-.^_`|~); got "bad header"',
    ],
    [
      'forward_headers with an empty name',
      { forward_headers: [''] },
      'config.forward_headers[0]',
      "must be a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~); got an empty string",
    ],
    ['forward_headers as a string', { forward_headers: 'x-a,x-b' }, 'config.forward_headers', 'must be an array of header names; got "x-a,x-b"'],
    ['provider empty', { provider: '' }, 'config.provider', 'must be a non-empty string (a provider name or an @provider-slug); got an empty string'],
    ['name empty', { ...base, name: '' }, 'config.name', 'must be a non-empty string; got an empty string'],
    ['api_key not a string', { provider: 'openai', api_key: 123 }, 'config.api_key', 'must be a string; got 123'],
    ['strict_api_compliance as a string', { ...base, strict_api_compliance: 'false' }, 'config.strict_api_compliance', 'must be true or false; got "false"'],
    [
      'override_params an array',
      { ...base, override_params: [] },
      'config.override_params',
      'must be an object of request parameters (e.g. {"model": "…"}); got an empty array',
    ],
    [
      'cloudB_service_account_json a string',
      { provider: 'vertex-ai', cloudB_region: 'r', cloudB_service_account_json: '{}' },
      'config.cloudB_service_account_json',
      'must be an object (the service account JSON); got "{}"',
    ],
    [
      'deployment without alias',
      { ...base, deployments: [{ deployment_id: 'd', api_version: 'v' }] },
      'config.deployments[0].alias',
      'is required; must be a string',
    ],
    [
      'deployment unknown property',
      { ...base, deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', default: true }] },
      'config.deployments[0].default',
      'unknown property "default"; did you mean "is_default"?',
    ],
    [
      'deployment property without a close match',
      { ...base, deployments: [{ deployment_id: 'd', alias: 'a', api_version: 'v', zone: 'x' }] },
      'config.deployments[0].zone',
      'unknown property "zone"; allowed here: deployment_id, alias, api_version, is_default',
    ],
    ['hook without id', { before_request_hooks: [{ type: 'guardrail' }] }, 'config.before_request_hooks[0].id', 'is required; must be a non-empty string'],
    [
      'hook check without parameters',
      { before_request_hooks: [{ id: 'h', checks: [{ id: 'c' }] }] },
      'config.before_request_hooks[0].checks[0].parameters',
      'is required; must be an object',
    ],
    [
      'hook check without id',
      { after_request_hooks: [{ id: 'h', checks: [{ parameters: {} }] }] },
      'config.after_request_hooks[0].checks[0].id',
      'is required; must be a non-empty string',
    ],
    [
      'hook feedback value not a number',
      { before_request_hooks: [{ id: 'h', on_fail: { feedback: { value: 'bad' } } }] },
      'config.before_request_hooks[0].on_fail.feedback.value',
      'must be a number; got "bad"',
    ],
    [
      'hook feedback metadata not an object',
      { after_request_hooks: [{ id: 'h', on_success: { feedback: { metadata: 'm' } } }] },
      'config.after_request_hooks[0].on_success.feedback.metadata',
      'must be an object; got "m"',
    ],
    [
      'hook type not guardrail or mutator',
      { before_request_hooks: [{ id: 'h', type: 'filter' }] },
      'config.before_request_hooks[0].type',
      'must be "guardrail" or "mutator"; got "filter"',
    ],
    ['hooks not an array', { before_request_hooks: { id: 'h' } }, 'config.before_request_hooks', 'must be an array of hook objects; got an object'],
    ['guardrail empty string', { input_guardrails: [''] }, 'config.input_guardrails[0]', 'must be a non-empty string (a guardrail id); got an empty string'],
    ['guardrail a number', { input_guardrails: [5] }, 'config.input_guardrails[0]', 'must be a guardrail id (a non-empty string) or a guardrail object; got 5'],
    [
      'guardrail extra property not an object',
      { output_guardrails: [{ id: 'g', 'default.contains': ['a'] }] },
      'config.output_guardrails[0]["default.contains"]',
      'must be an object (the parameters of the check this property names); got an array',
    ],
    [
      'guardrail misspelled deny',
      { input_guardrails: [{ id: 'g', dney: true }] },
      'config.input_guardrails[0].dney',
      'must be an object (the parameters of the check this property names); got true; did you mean "deny"?',
    ],
    ['guardrail id not a string', { output_guardrails: [{ id: 7 }] }, 'config.output_guardrails[0].id', 'must be a string; got 7'],
  ];

  it.each(rejected)('%s → %s', (_, input, param, message) => {
    expect(issuesOf(input)).toContainEqual({ param, message });
  });

  it('names an unknown check, with the nearest id, and a parameter a check cannot run with', () => {
    expect(issuesOf({ before_request_hooks: [{ id: 'h', checks: [{ id: 'default.regexMatches', parameters: { rule: 'x' } }] }] })).toEqual([
      {
        param: 'config.before_request_hooks[0].checks[0].id',
        message: expect.stringContaining('There is no built-in check "default.regexMatches". Did you mean "default.regexMatch"?'),
      },
    ]);
    expect(issuesOf({ output_guardrails: [{ id: 'g', 'default.wordCount': { minWords: 'five' } }] })).toEqual([
      {
        param: 'config.output_guardrails[0]["default.wordCount"].minWords',
        message: 'default.wordCount: `minWords` must be a whole number of at least 0; got the string "five".',
      },
    ]);
  });

  it('reports only the expected issue for a single violation', () => {
    expect(issuesOf({ ...base, retry: { attempts: 9 } })).toEqual([{ param: 'config.retry.attempts', message: 'must be an integer from 0 to 5; got 9' }]);
    expect(issuesOf({ strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'a' }] }, targets: twoTargets })).toEqual([
      { param: 'config.strategy.default', message: 'conditional strategy needs `default` naming one of the targets: a, b' },
    ]);
  });

  it('reports every violation at once, zod and cross-field rules together', () => {
    const issues = issuesOf({
      strategy: { mode: 'conditional', conditions: [{ query: {}, then: 'nope' }] },
      targets: [
        { name: 'a', provider: 'openai', retry: { attempts: 9 }, retries: 1 },
        { name: 'b', provider: 'anthropic', cache: { mode: 'simple', max_age: 0 }, custom_host: 'nope' },
        { name: 'c', strategy: { mode: 'loadbalance' }, targets: [{ provider: 'x', weight: 0 }] },
      ],
      cb_config: { failure_threshold: 0, cooldown_interval: 1000 },
    });
    expect(issues).toHaveLength(9);
    expect(issues).toEqual(
      expect.arrayContaining([
        { param: 'config.targets[0].retry.attempts', message: 'must be an integer from 0 to 5; got 9' },
        { param: 'config.targets[0].retries', message: 'unknown property "retries"; did you mean "retry"?' },
        { param: 'config.targets[1].cache.max_age', message: 'must be a positive integer number of seconds, at most 7776000 (90 days); got 0' },
        { param: 'config.targets[1].custom_host', message: 'must be an http:// or https:// URL (the base URL of the provider); got "nope"' },
        { param: 'config.cb_config.failure_threshold', message: 'must be a number of at least 1; got 0' },
        { param: 'config.cb_config.cooldown_interval', message: 'must be a number of milliseconds from 30000 to 86400000 (a day); got 1000' },
        { param: 'config.strategy.conditions[0].then', message: 'must name one of the targets: a, b, c; got "nope"' },
        { param: 'config.strategy.default', message: 'conditional strategy needs `default` naming one of the targets: a, b, c' },
        {
          param: 'config.targets[2].targets',
          message: 'a loadbalance strategy needs at least one target with weight > 0 (a missing weight counts as 1); all 1 weights are 0',
        },
      ]),
    );
  });

  it('reports each unknown property of one object separately', () => {
    expect(issuesOf({ provider: 'openai', apikey: 'k', timout: 5 })).toEqual([
      { param: 'config.apikey', message: 'unknown property "apikey"; did you mean "api_key"?' },
      { param: 'config.timout', message: 'unknown property "timout"; did you mean "request_timeout"?' },
    ]);
  });

  it('never throws on values JSON cannot hold (circular, deeply nested)', () => {
    const circular: Record<string, unknown> = { provider: 'x', strategy: { mode: 'fallback' } };
    circular.targets = [circular];
    expect(parseConfig(circular)).toMatchObject({ ok: false, issues: [{ param: 'config' }] });
    let deep: Record<string, unknown> = base;
    for (let i = 0; i < 50_000; i++) deep = { strategy: { mode: 'fallback' }, targets: [deep] };
    expect(parseConfig(deep)).toEqual({ ok: false, issues: [{ param: 'config', message: 'is nested too deeply to validate; flatten the `targets` tree' }] });
  });
});

describe('parseConfigHeader', () => {
  it('parses an inline JSON config', async () => {
    expect(await parseConfigHeader(' {"provider":"openai","retry":{"attempts":2}} ')).toEqual({
      ok: true,
      config: { provider: 'openai', retry: { attempts: 2 } },
    });
  });

  it('reports malformed JSON under x-gateway-config', async () => {
    const result = await parseConfigHeader('{"provider": "openai",');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0].param).toBe('x-gateway-config');
    expect(result.issues[0].message).toMatch(/^must be valid JSON; \S/);
  });

  it('reports a value that is not inline JSON', async () => {
    expect(await parseConfigHeader('cfg_123')).toEqual({
      ok: false,
      issues: [{ param: 'x-gateway-config', message: 'must be a JSON config object starting with "{" (a saved config id is resolved separately)' }],
    });
  });

  it('judges a check the way parseConfig does once the checks have loaded, and needs them for no other config', async () => {
    const badCheck = { ...base, output_guardrails: [{ id: 'g', 'default.wordCount': { minWords: 'five' } }] };
    expect(await parseConfigLoadingChecks(badCheck)).toEqual(parseConfig(badCheck));
    expect(await parseConfigLoadingChecks(badCheck)).toMatchObject({
      ok: false,
      issues: [{ param: 'config.output_guardrails[0]["default.wordCount"].minWords' }],
    });
    const noChecks = { ...base, retry: { attempts: 2 } };
    expect(parseConfigWith(noChecks, () => expect.unreachable('a config without checks asks for no check rules'))).toEqual({ ok: true, config: noChecks });
    expect(await parseConfigLoadingChecks(noChecks)).toEqual({ ok: true, config: noChecks });
  });

  it('reports config violations under config', async () => {
    expect(await parseConfigHeader('{"provider":"openai","retry":{"attempts":6}}')).toEqual({
      ok: false,
      issues: [{ param: 'config.retry.attempts', message: 'must be an integer from 0 to 5; got 6' }],
    });
  });
});

describe('configError', () => {
  it('is a 400 AB01 error naming the first issue and listing them all', () => {
    const issues = issuesOf({ retry: { attempts: 9 }, foo: 1 });
    const error = configError(issues);
    expect(error.status).toBe(400);
    expect(error.code).toBe('AB01');
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe('config.retry.attempts');
    expect(error.message).toBe(
      'Invalid config: config.retry.attempts: must be an integer from 0 to 5; got 9; config.foo: unknown property "foo"; it is not a field of the config object',
    );
    expect(error.toBody()).toEqual({
      error: {
        message: error.message,
        type: 'invalid_request_error',
        param: 'config.retry.attempts',
        code: 'AB01',
        issues: [
          { param: 'config.retry.attempts', message: 'must be an integer from 0 to 5; got 9' },
          { param: 'config.foo', message: 'unknown property "foo"; it is not a field of the config object' },
        ],
      },
    });
  });
});

// ---- property-based tests

const word = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/);
const freeObject = fc.dictionary(fc.stringMatching(/^[a-z_]{1,8}$/), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3, noNullPrototype: true });
const statusCodes = fc.array(fc.integer({ min: 100, max: 599 }), { maxLength: 4 });
const opt = { noNullPrototype: true } as const;
const feedback = fc.record(
  { value: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: fc.double({ noNaN: true, noDefaultInfinity: true }), metadata: freeObject },
  { requiredKeys: [], ...opt },
);
const outcome: fc.Arbitrary<Record<string, unknown>> = fc.record({ feedback, deny: fc.boolean() }, { requiredKeys: [], ...opt });
// Check ids and parameters must name a built-in check that can run with them.
const check = fc.constantFrom(
  { id: 'default.contains', parameters: { words: ['a'], operator: 'any' } },
  { id: 'default.wordCount', parameters: { minWords: 1, maxWords: 50 } },
  { id: 'default.regexMatch', parameters: { rule: '[0-9]+', not: true } },
);
const hook = fc.record(
  {
    id: word,
    type: fc.constantFrom('guardrail', 'mutator'),
    checks: fc.array(check, { maxLength: 2 }),
    deny: fc.boolean(),
    async: fc.boolean(),
    on_fail: outcome,
    on_success: outcome,
  },
  { requiredKeys: ['id'], ...opt },
);
const guardrail = fc.oneof(
  word,
  fc.record(
    {
      id: fc.string(),
      deny: fc.boolean(),
      async: fc.boolean(),
      on_fail: outcome,
      on_success: outcome,
      'default.contains': fc.constant({ words: ['b'], operator: 'none' }),
    },
    { requiredKeys: [], ...opt },
  ),
);

const leafSettings = {
  provider: fc.constantFrom('openai', 'anthropic', '@openai-prod', 'bedrock'),
  api_key: fc.string(),
  name: word,
  strict_api_compliance: fc.boolean(),
  virtual_key: word,
  prompt_id: word,
  request_timeout: fc.integer({ min: 1, max: 600_000 }),
  cache: fc.record({ mode: fc.constantFrom('simple', 'semantic'), max_age: fc.integer({ min: 1, max: 7_776_000 }) }, { requiredKeys: ['mode'], ...opt }),
  retry: fc.record(
    { attempts: fc.integer({ min: 0, max: 5 }), on_status_codes: statusCodes, use_retry_after_headers: fc.boolean() },
    { requiredKeys: ['attempts'], ...opt },
  ),
  cb_config: fc.record(
    { failure_threshold: fc.integer({ min: 1, max: 100 }), cooldown_interval: fc.integer({ min: 30_000, max: 3_600_000 }), failure_status_codes: statusCodes },
    { requiredKeys: ['failure_threshold', 'cooldown_interval'], ...opt },
  ),
  weight: fc.double({ min: 0, max: 10, noNaN: true }),
  on_status_codes: statusCodes,
  custom_host: fc.webUrl({ validSchemes: ['http', 'https'] }),
  forward_headers: fc.array(fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/), { maxLength: 3 }),
  override_params: freeObject,
  deployments: fc.array(
    fc.record(
      { deployment_id: fc.string(), alias: fc.string(), api_version: fc.string(), is_default: fc.boolean() },
      { requiredKeys: ['deployment_id', 'alias', 'api_version'], ...opt },
    ),
    { maxLength: 2 },
  ),
  cloudA_region: fc.string(),
  cloudB_service_account_json: freeObject,
  cloudC_deployment_type: fc.constantFrom('serverless', 'managed'),
  cloudC_entra_scope: fc.string(),
  before_request_hooks: fc.array(hook, { maxLength: 2 }),
  after_request_hooks: fc.array(hook, { maxLength: 2 }),
  input_guardrails: fc.array(guardrail, { maxLength: 2 }),
  output_guardrails: fc.array(guardrail, { maxLength: 2 }),
};
const leaf = fc.record(leafSettings, { requiredKeys: ['provider'], ...opt });

type Json = Record<string, unknown>;
const { tree } = fc.letrec<{ tree: Json; routed: Json }>((tie) => ({
  tree: fc.oneof({ maxDepth: 3, depthIdentifier: 'tree' }, leaf, tie('routed')),
  routed: fc
    .tuple(
      fc.constantFrom('single', 'loadbalance', 'fallback', 'conditional'),
      fc.array(tie('tree'), { minLength: 1, maxLength: 3, depthIdentifier: 'tree' }),
      statusCodes,
      fc.nat(),
    )
    .map(([mode, children, codes, pick]) => {
      const targets = children.map((child) => ({ ...child }));
      const strategy: Json = { mode };
      if (mode === 'fallback') strategy.on_status_codes = codes;
      if (mode === 'loadbalance' && targets.every((t) => t.weight === 0)) targets[0].weight = 1;
      if (mode === 'conditional') {
        targets.forEach((t, i) => (t.name = `t${i}`));
        strategy.conditions = targets.map((_, i) => ({ query: { 'metadata.k': { $eq: i } }, then: `t${(i + pick) % targets.length}` }));
        strategy.default = `t${pick % targets.length}`;
      }
      return { strategy, targets } as Json;
    }),
}));

/** Paths of the objects whose properties the schema restricts (not free-form ones such as override_params). */
const structural = new Set([
  'targets',
  'strategy',
  'conditions',
  'cache',
  'retry',
  'cb_config',
  'deployments',
  'before_request_hooks',
  'after_request_hooks',
  'checks',
  'on_fail',
  'on_success',
  'feedback',
  'input_guardrails',
  'output_guardrails',
]);
function strictObjectPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const out: (string | number)[][] = [];
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...strictObjectPaths(item, [...path, i])));
  else if (typeof value === 'object' && value !== null) {
    out.push(path);
    for (const [key, child] of Object.entries(value)) if (structural.has(key)) out.push(...strictObjectPaths(child, [...path, key]));
  }
  return out;
}
function allPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const out = [path];
  if (Array.isArray(value)) value.forEach((item, i) => out.push(...allPaths(item, [...path, i])));
  else if (typeof value === 'object' && value !== null) for (const [key, child] of Object.entries(value)) out.push(...allPaths(child, [...path, key]));
  return out;
}
function setAt(root: unknown, path: (string | number)[], value: unknown, remove: boolean): unknown {
  if (path.length === 0) return value;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (remove && !Array.isArray(node)) delete node[last];
  else node[last] = value;
  return copy;
}
const paramPath = (path: (string | number)[]) =>
  `config${path.map((k) => (typeof k === 'number' ? `[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`)).join('')}`;

function expectWellFormed(result: ReturnType<typeof parseConfig>) {
  if (result.ok) return;
  expect(result.issues.length).toBeGreaterThan(0);
  for (const issue of result.issues) {
    expect(issue.param === 'x-gateway-config' || issue.param.startsWith('config')).toBe(true);
    expect(typeof issue.message).toBe('string');
    expect(issue.message.length).toBeGreaterThan(0);
  }
}

describe('parseConfig: property-based', () => {
  it('accepts every generated valid config, unchanged', () => {
    fc.assert(
      fc.property(tree, (config) => {
        expectAccepted(config);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on random JSON and always explains a rejection', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expectWellFormed(parseConfig(value));
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on random header strings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v) ?? ''),
        ),
        async (text) => {
          expectWellFormed(await parseConfigHeader(`{${text}`));
          expectWellFormed(await parseConfigHeader(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never throws on random mutations of valid configs', () => {
    fc.assert(
      fc.property(tree, fc.nat(), fc.jsonValue({ maxDepth: 2 }), fc.boolean(), (config, pick, value, remove) => {
        const paths = allPaths(config);
        const mutated = setAt(config, paths[pick % paths.length], value, remove);
        expectWellFormed(parseConfig(mutated));
      }),
      { numRuns: 500 },
    );
  });

  it('rejects an unknown property added to any restricted object, at its exact path', () => {
    fc.assert(
      fc.property(tree, fc.nat(), (config, pick) => {
        const paths = strictObjectPaths(config);
        const path = [...paths[pick % paths.length], 'zz_unknown'];
        const result = parseConfig(setAt(config, path, 1, false));
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.issues.map((issue) => issue.param)).toContain(paramPath(path));
      }),
      { numRuns: 300 },
    );
  });
});
