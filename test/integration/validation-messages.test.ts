/**
 * Every validation error of the control routes that save guardrails, configs, prompts and policies
 * says which value to fix twice over: `param` is the JSON path of the value, and the message names
 * it too (the check id for a check's parameters, the path inside a config, the variable or partial
 * of a template, the policy field). One row per kind of refusal; each row is sent as it is and must
 * answer 400 with that `param` and a message holding every listed name.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayFetch } from '../support/gateway-client';

interface Row {
  /** What is wrong, for the test's name. */
  what: string;
  method: 'GET' | 'POST' | 'PUT';
  /** Under `/v1`; `{guardrail}`, `{prompt}`, `{promptWithVariables}`, `{promptWithPartial}`, `{partial}`, `{rateLimit}` and `{budget}` stand for the ids made before the rows run. */
  path: string;
  body?: unknown;
  param: string;
  /** Strings the message must contain: the thing at fault, and what to send where the row says so. */
  names: string[];
  code?: string;
}

const run = randomBytes(4).toString('hex');
/** Names the rows and the setup share; unique per run, since the gateway and its store are shared. */
const partialName = `vm_partial_${run}`;
const absentPartial = `vm_absent_${run}`;
const policyTag = `vm-${run}`;

const json = { 'content-type': 'application/json' };
const ids: Record<string, string> = {};

async function call(method: string, path: string, body?: unknown) {
  const response = await gatewayFetch(path, { method, headers: body === undefined ? {} : json, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

async function created(path: string, body: unknown): Promise<string> {
  const answer = await call('POST', path, body);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.id as string;
}

// ---- guardrails

const notNull = { id: 'default.notNull', parameters: {} };
const guardrail = (checks: unknown[], extra: Record<string, unknown> = {}) => ({ name: 'validation messages', checks, ...extra });

const guardrailRows: Row[] = [
  { what: 'no name', method: 'POST', path: '/guardrails', body: { checks: [notNull] }, param: 'name', names: ['name'] },
  { what: 'an empty check list', method: 'POST', path: '/guardrails', body: guardrail([]), param: 'checks', names: ['checks', '1 to 50'] },
  {
    what: 'a check without an id',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([notNull, { parameters: {} }]),
    param: 'checks[1].id',
    names: ['checks[1].id', 'default.regexMatch'],
  },
  { what: 'an empty check id', method: 'POST', path: '/guardrails', body: guardrail([{ id: '' }]), param: 'checks[0].id', names: ['checks[0].id'] },
  {
    what: 'parameters that are not an object',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.notNull', parameters: [1] }]),
    param: 'checks[0].parameters',
    names: ['checks[0].parameters', 'object'],
  },
  {
    what: 'a check field that is not id or parameters',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.notNull', params: {} }]),
    param: 'checks[0].params',
    names: ['checks[0]', '"params"', 'id and parameters'],
  },
  {
    what: 'an unknown check id',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([notNull, { id: 'default.wordCont', parameters: {} }]),
    param: 'checks[1].id',
    names: ['default.wordCont', 'default.wordCount'],
    code: 'invalid_guardrail_check',
  },
  {
    what: 'a parameter out of range',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([notNull, { id: 'default.wordCount', parameters: { maxWords: -3 } }]),
    param: 'checks[1].parameters.maxWords',
    names: ['default.wordCount', '`maxWords`', 'whole number'],
    code: 'invalid_guardrail_check',
  },
  {
    what: 'a misspelt parameter',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.regexMatch', parameters: { rul: 'a' } }]),
    param: 'checks[0].parameters.rul',
    names: ['default.regexMatch', '`rul`', '`rule`'],
  },
  {
    what: 'a list item of the wrong type',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.contains', parameters: { words: ['a', 7] } }]),
    param: 'checks[0].parameters.words[1]',
    names: ['default.contains', '`words[1]`'],
  },
  {
    what: 'a header name HTTP does not allow',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.webhook', parameters: { webhookURL: 'http://127.0.0.1:9/hook', headers: { 'x bad': 'v' } } }]),
    param: 'checks[0].parameters.headers["x bad"]',
    names: ['default.webhook', '`headers`', '"x bad"'],
  },
  {
    what: 'a value nested in a parameter',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.modelRules', parameters: { rules: { defaults: [3] } } }]),
    param: 'checks[0].parameters.rules.defaults[0]',
    names: ['default.modelRules', '`rules.defaults[0]`'],
  },
  {
    what: '`not` on a check that cannot invert',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.contains', parameters: { words: ['a'], not: true } }]),
    param: 'checks[0].parameters.not',
    names: ['default.contains', '`not`', '`operator`'],
  },
  {
    what: 'a pattern the gateway cannot run',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.regexMatch', parameters: { rule: '(a)\\1' } }]),
    param: 'checks[0].parameters.rule',
    names: ['default.regexMatch', '`rule`'],
  },
  {
    what: 'actions.deny not a boolean',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([notNull], { actions: { deny: 'yes' } }),
    param: 'actions.deny',
    names: ['actions.deny', 'true or false'],
  },
  {
    what: 'a feedback value not a number',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([notNull], { actions: { on_fail: { feedback: { value: 'x' } } } }),
    param: 'actions.on_fail.feedback.value',
    names: ['actions.on_fail.feedback.value'],
  },
  {
    what: 'an unknown action',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([notNull], { actions: { denny: true } }),
    param: 'actions.denny',
    names: ['actions', '"denny"'],
  },
  {
    what: 'the mask placeholder in a new guardrail',
    method: 'POST',
    path: '/guardrails',
    body: guardrail([{ id: 'default.log', parameters: { logURL: 'http://127.0.0.1:9/log', headers: '********' } }]),
    param: 'checks[0].parameters.headers',
    names: ['checks[0].parameters.headers', '********'],
  },
  {
    what: 'the mask placeholder where nothing is stored',
    method: 'PUT',
    path: '/guardrails/{guardrail}',
    body: guardrail([notNull, { id: 'default.log', parameters: { logURL: 'http://127.0.0.1:9/log', headers: '********' } }]),
    param: 'checks[1].parameters.headers',
    names: ['checks[1].parameters.headers'],
  },
  { what: 'an unknown field', method: 'POST', path: '/guardrails', body: guardrail([notNull], { colour: 'red' }), param: 'colour', names: ['"colour"'] },
];

// ---- configs

const saveConfig = (config: unknown) => ({ name: 'validation messages', config });
const twoTargets = (second: Record<string, unknown>) => ({
  strategy: { mode: 'fallback' },
  targets: [{ provider: 'openai' }, { provider: 'openai', ...second }],
});
const conditional = (conditions: unknown[], fallback: string) => ({
  strategy: { mode: 'conditional', conditions, default: fallback },
  targets: [
    { name: 'a', provider: 'openai' },
    { name: 'b', provider: 'openai' },
  ],
});

const configRows: Row[] = [
  { what: 'no config', method: 'POST', path: '/configs', body: { name: 'x' }, param: 'config', names: ['config is required'] },
  { what: 'a name not a string', method: 'POST', path: '/configs', body: { name: 42, config: { provider: 'openai' } }, param: 'name', names: ['name'] },
  { what: 'an unknown body field', method: 'POST', path: '/configs', body: { config: { provider: 'openai' }, extra: 1 }, param: 'extra', names: ['"extra"'] },
  {
    what: 'a value out of range in a target',
    method: 'POST',
    path: '/configs',
    body: saveConfig(twoTargets({ retry: { attempts: 9 } })),
    param: 'config.targets[1].retry.attempts',
    names: ['config.targets[1].retry.attempts', 'from 0 to 5'],
    code: 'AB01',
  },
  {
    what: 'a misspelt property',
    method: 'POST',
    path: '/configs',
    body: saveConfig({ provider: 'openai', retries: { attempts: 1 } }),
    param: 'config.retries',
    names: ['config.retries', '"retry"'],
  },
  {
    what: 'a cache mode that does not exist',
    method: 'POST',
    path: '/configs',
    body: saveConfig({ cache: { mode: 'sometimes' } }),
    param: 'config.cache.mode',
    names: ['config.cache.mode', 'simple, semantic'],
  },
  {
    what: 'a conditional default naming no target',
    method: 'POST',
    path: '/configs',
    body: saveConfig(conditional([{ query: { 'metadata.tier': 'pro' }, then: 'a' }], 'c')),
    param: 'config.strategy.default',
    names: ['config.strategy.default', 'a, b', '"c"'],
  },
  {
    what: 'a query on a field routing cannot test',
    method: 'POST',
    path: '/configs',
    body: saveConfig(conditional([{ query: { model: 'gpt-4o' }, then: 'a' }], 'a')),
    param: 'config.strategy.conditions[0].query.model',
    names: ['config.strategy.conditions[0].query.model', 'metadata.'],
  },
  {
    what: 'a hook check parameter in a target',
    method: 'POST',
    path: '/configs',
    body: saveConfig(twoTargets({ before_request_hooks: [{ id: 'h', checks: [{ id: 'default.regexMatch', parameters: { rule: '(a)\\1' } }] }] })),
    param: 'config.targets[1].before_request_hooks[0].checks[0].parameters.rule',
    names: ['config.targets[1].before_request_hooks[0].checks[0].parameters.rule', 'default.regexMatch', '`rule`'],
  },
  {
    what: 'an unknown hook check',
    method: 'POST',
    path: '/configs',
    body: saveConfig({ provider: 'openai', after_request_hooks: [{ id: 'h', checks: [notNull, { id: 'default.jsonSchemas', parameters: {} }] }] }),
    param: 'config.after_request_hooks[0].checks[1].id',
    names: ['config.after_request_hooks[0].checks[1].id', '"default.jsonSchemas"', '"default.jsonSchema"'],
  },
  {
    what: 'an inline input guardrail parameter',
    method: 'POST',
    path: '/configs',
    body: saveConfig({ provider: 'openai', input_guardrails: [{ id: 'g', 'default.wordCount': { maxWords: -1 } }] }),
    param: 'config.input_guardrails[0]["default.wordCount"].maxWords',
    names: ['config.input_guardrails[0]["default.wordCount"].maxWords', 'default.wordCount', '`maxWords`'],
  },
  {
    what: 'an unknown check in an inline output guardrail',
    method: 'POST',
    path: '/configs',
    body: saveConfig({ provider: 'openai', output_guardrails: [{ 'default.wordcont': {} }] }),
    param: 'config.output_guardrails[0]["default.wordcont"]',
    names: ['"default.wordcont"', '"default.wordCount"'],
  },
  {
    what: 'a stored key with nowhere to go',
    method: 'POST',
    path: '/configs',
    body: saveConfig({ api_key: 'sk-validation', retry: { attempts: 1 } }),
    param: 'config.provider',
    names: ['config.provider', 'api_key'],
  },
  {
    what: 'the mask placeholder in a new config',
    method: 'POST',
    path: '/configs',
    body: saveConfig({ provider: 'openai', api_key: '********' }),
    param: 'config.api_key',
    names: ['config.api_key', '********'],
  },
  {
    what: 'a version in a PUT',
    method: 'PUT',
    path: '/configs/cfg_validation@2',
    body: saveConfig({ provider: 'openai' }),
    param: 'configId',
    names: ['cfg_validation', 'without a version'],
  },
  {
    what: 'a config too large to store',
    method: 'POST',
    path: '/configs',
    body: saveConfig({ provider: 'openai', override_params: { blob: 'x'.repeat(210 * 1024) } }),
    param: 'config',
    names: ['config', '200 KB'],
    code: 'config_too_large',
  },
];

// ---- prompts and partials

const nestedSections = (depth: number) =>
  `${Array.from({ length: depth }, (_, index) => `{{#s${index + 1}}}`).join('')}x${Array.from({ length: depth }, (_, index) => `{{/s${depth - index}}}`).join('')}`;

const promptRows: Row[] = [
  { what: 'no name', method: 'POST', path: '/prompts', body: { string: 'Hi' }, param: 'name', names: ['name'] },
  { what: 'no template', method: 'POST', path: '/prompts', body: { name: 'p' }, param: 'string', names: ['string is required'] },
  {
    what: 'a section never closed',
    method: 'POST',
    path: '/prompts',
    body: { name: 'p', string: 'Hello {{#open}} never closed' },
    param: 'string',
    names: ['string', '"open"'],
    code: 'invalid_prompt_template',
  },
  {
    what: 'a section never closed in the second message',
    method: 'POST',
    path: '/prompts',
    body: {
      name: 'p',
      string: JSON.stringify([
        { role: 'system', content: 'ok' },
        { role: 'user', content: '{{#open}}' },
      ]),
    },
    param: 'string',
    names: ['text 2 of the message list', '"open"'],
  },
  {
    what: 'a message without a role',
    method: 'POST',
    path: '/prompts',
    body: { name: 'p', string: JSON.stringify([{ role: 'user', content: 'a' }, { content: 'b' }]) },
    param: 'string',
    names: ['Message 1', '"role"'],
  },
  {
    what: 'sections nested past the limit',
    method: 'POST',
    path: '/prompts',
    body: { name: 'p', string: nestedSections(51) },
    param: 'string',
    names: ['{{#s51}}', 'the limit is 50'],
    code: 'template_too_deep',
  },
  {
    what: 'messages among the hyperparameters',
    method: 'POST',
    path: '/prompts',
    body: { name: 'p', string: 'Hi', parameters: { messages: [] } },
    param: 'parameters.messages',
    names: ['parameters.messages'],
  },
  {
    what: 'both provider and virtual_key',
    method: 'POST',
    path: '/prompts',
    body: { name: 'p', string: 'Hi', provider: '@a', virtual_key: 'b' },
    param: 'virtual_key',
    names: ['provider', 'virtual_key'],
  },
  { what: 'a model not a string', method: 'POST', path: '/prompts', body: { name: 'p', string: 'Hi', model: 4 }, param: 'model', names: ['model'] },
  { what: 'patch on a new prompt', method: 'POST', path: '/prompts', body: { name: 'p', string: 'Hi', patch: true }, param: 'patch', names: ['patch'] },
  {
    what: 'a version in a PUT',
    method: 'PUT',
    path: '/prompts/{prompt}@2',
    body: { string: 'Hi' },
    param: 'promptId',
    names: ['without a version'],
  },
  {
    what: 'a variable the template prints but the render does not give',
    method: 'POST',
    path: '/prompts/{promptWithVariables}/render',
    body: { variables: {} },
    param: 'variables.persona',
    names: ['persona', '"variables"'],
    code: 'missing_variable',
  },
  {
    what: 'a nested variable not given',
    method: 'POST',
    path: '/prompts/{promptWithVariables}/render',
    body: { variables: { persona: 'a guide' } },
    param: 'variables.user.name',
    names: ['user.name'],
    code: 'missing_variable',
  },
  { what: 'variables not an object', method: 'POST', path: '/prompts/{prompt}/render', body: { variables: 'x' }, param: 'variables', names: ['variables'] },
  {
    what: 'a hyperparameters key',
    method: 'POST',
    path: '/prompts/{prompt}/render',
    body: { variables: {}, hyperparameters: { temperature: 1 } },
    param: 'hyperparameters',
    names: ['"hyperparameters"'],
  },
  { what: 'messages at the root', method: 'POST', path: '/prompts/{prompt}/render', body: { messages: [] }, param: 'messages', names: ['messages'] },
  {
    what: 'an included partial that does not exist',
    method: 'POST',
    path: '/prompts/{promptWithPartial}/render',
    body: { variables: {} },
    param: 'string',
    names: [absentPartial],
    code: 'partial_not_found',
  },
  {
    what: 'a partial name templates cannot include',
    method: 'POST',
    path: '/prompts/partials',
    body: { name: 'bad name', string: 'x' },
    param: 'name',
    names: ['name', '{{>name}}'],
  },
  {
    what: 'a partial renamed',
    method: 'PUT',
    path: '/prompts/partials/{partial}',
    body: { name: `${partialName}_renamed`, string: 'y' },
    param: 'name',
    names: [partialName],
  },
  {
    what: 'a partial that includes itself',
    method: 'PUT',
    path: '/prompts/partials/{partial}',
    body: { string: `again {{>${partialName}}}` },
    param: 'string',
    names: [`${partialName} → ${partialName}`],
    code: 'partial_recursion',
  },
  {
    what: 'a version below 1 to publish',
    method: 'PUT',
    path: '/prompts/partials/{partial}/makeDefault',
    body: { version: 0 },
    param: 'version',
    names: ['version'],
  },
];

// ---- rate-limit and usage-limit policies

/** A policy selecting only requests of this run's tag, so the one saved for the PUT rows limits nothing else. */
const rateLimit = (fields: Record<string, unknown> = {}) => ({
  conditions: [{ key: 'metadata.vm', value: policyTag }],
  group_by: [{ key: 'metadata.vm' }],
  type: 'requests',
  unit: 'rpm',
  value: 1000,
  ...fields,
});

const rateLimitRows: Row[] = [
  { what: 'no conditions', method: 'POST', path: '/policies/rate-limits', body: rateLimit({ conditions: [] }), param: 'conditions', names: ['conditions'] },
  {
    what: 'a condition key the gateway does not read',
    method: 'POST',
    path: '/policies/rate-limits',
    body: rateLimit({ conditions: [{ key: 'colour', value: 'red' }] }),
    param: 'conditions[0].key',
    names: ['conditions[0].key', '"colour"', 'metadata.<key>'],
  },
  {
    what: 'a condition key not a string',
    method: 'POST',
    path: '/policies/rate-limits',
    body: rateLimit({
      conditions: [
        { key: 'metadata.vm', value: policyTag },
        { key: 3, value: 'x' },
      ],
    }),
    param: 'conditions[1].key',
    names: ['conditions[1].key'],
  },
  {
    what: 'a condition value not a string',
    method: 'POST',
    path: '/policies/rate-limits',
    body: rateLimit({ conditions: [{ key: 'model', value: 3 }] }),
    param: 'conditions[0].value',
    names: ['conditions[0].value'],
  },
  {
    what: '101 condition values',
    method: 'POST',
    path: '/policies/rate-limits',
    body: rateLimit({ conditions: [{ key: 'model', value: Array.from({ length: 101 }, (_, index) => `m${index}`) }] }),
    param: 'conditions[0].value',
    names: ['conditions[0].value', '1 to 100 strings'],
  },
  {
    what: 'a condition field that is not key or value',
    method: 'POST',
    path: '/policies/rate-limits',
    body: rateLimit({ conditions: [{ key: 'model', val: 'x' }] }),
    param: 'conditions[0].val',
    names: ['conditions[0]', '"val"'],
  },
  {
    what: 'a group key with nothing after metadata.',
    method: 'POST',
    path: '/policies/rate-limits',
    body: rateLimit({ group_by: [{ key: 'metadata.' }] }),
    param: 'group_by[0].key',
    names: ['group_by[0].key', '"metadata."'],
  },
  { what: 'an empty group_by', method: 'POST', path: '/policies/rate-limits', body: rateLimit({ group_by: [] }), param: 'group_by', names: ['group_by'] },
  { what: 'an unknown unit', method: 'POST', path: '/policies/rate-limits', body: rateLimit({ unit: 'rps' }), param: 'unit', names: ['unit', 'rpm'] },
  { what: 'an unknown type', method: 'POST', path: '/policies/rate-limits', body: rateLimit({ type: 'cost' }), param: 'type', names: ['type'] },
  { what: 'a value of 0', method: 'POST', path: '/policies/rate-limits', body: rateLimit({ value: 0 }), param: 'value', names: ['value', 'at least 1'] },
  { what: 'a name too long', method: 'POST', path: '/policies/rate-limits', body: rateLimit({ name: 'x'.repeat(256) }), param: 'name', names: ['name'] },
  { what: 'an unknown field', method: 'POST', path: '/policies/rate-limits', body: rateLimit({ colour: 'red' }), param: 'colour', names: ['"colour"'] },
  {
    what: 'a PUT that moves the policy',
    method: 'PUT',
    path: '/policies/rate-limits/{rateLimit}',
    body: { value: 5, organisation_id: 'org_elsewhere' },
    param: 'organisation_id',
    names: ['organisation_id'],
  },
  { what: 'a page size that is not a number', method: 'GET', path: '/policies/rate-limits?page_size=ten', param: 'page_size', names: ['page_size'] },
];

const budget = (fields: Record<string, unknown> = {}) => ({
  name: `validation ${run}`,
  conditions: [{ key: 'metadata.vm', value: policyTag }],
  group_by: [{ key: 'metadata.vm' }],
  type: 'tokens',
  credit_limit: 1000,
  ...fields,
});

const budgetRows: Row[] = [
  {
    what: 'a credit limit of 0',
    method: 'POST',
    path: '/policies/usage-limits',
    body: budget({ credit_limit: 0 }),
    param: 'credit_limit',
    names: ['credit_limit', 'greater than 0'],
  },
  {
    what: 'a fractional token limit',
    method: 'POST',
    path: '/policies/usage-limits',
    body: budget({ credit_limit: 2.5 }),
    param: 'credit_limit',
    names: ['credit_limit', 'whole number', '2.5'],
  },
  {
    what: 'an alert threshold above the limit',
    method: 'POST',
    path: '/policies/usage-limits',
    body: budget({ alert_threshold: 2000 }),
    param: 'alert_threshold',
    names: ['alert_threshold (2000)', 'credit_limit (1000)'],
  },
  {
    what: 'an unknown reset period',
    method: 'POST',
    path: '/policies/usage-limits',
    body: budget({ periodic_reset: 'daily' }),
    param: 'periodic_reset',
    names: ['periodic_reset', 'weekly or monthly'],
  },
  {
    what: 'both reset fields',
    method: 'POST',
    path: '/policies/usage-limits',
    body: budget({ periodic_reset: 'weekly', periodic_reset_days: 7 }),
    param: 'periodic_reset_days',
    names: ['periodic_reset', 'periodic_reset_days'],
  },
  {
    what: 'a reset after more than a year',
    method: 'POST',
    path: '/policies/usage-limits',
    body: budget({ periodic_reset_days: 366 }),
    param: 'periodic_reset_days',
    names: ['periodic_reset_days', '1 to 365'],
  },
  { what: 'an unknown type', method: 'POST', path: '/policies/usage-limits', body: budget({ type: 'requests' }), param: 'type', names: ['type'] },
  { what: 'an empty name', method: 'POST', path: '/policies/usage-limits', body: budget({ name: '' }), param: 'name', names: ['name'] },
  {
    what: 'a condition key the gateway does not read',
    method: 'POST',
    path: '/policies/usage-limits',
    body: budget({
      conditions: [
        { key: 'metadata.vm', value: policyTag },
        { key: 'user', value: 'x' },
      ],
    }),
    param: 'conditions[1].key',
    names: ['conditions[1].key', '"user"'],
  },
  {
    what: 'a group_by field that is not key',
    method: 'POST',
    path: '/policies/usage-limits',
    body: budget({ group_by: [{ name: 'model' }] }),
    param: 'group_by[0].name',
    names: ['group_by[0]', '"name"'],
  },
  {
    what: 'a PUT that lowers the limit below the alert threshold',
    method: 'PUT',
    path: '/policies/usage-limits/{budget}',
    body: { credit_limit: 100 },
    param: 'alert_threshold',
    names: ['alert_threshold (500)', 'credit_limit (100)'],
  },
  {
    what: 'a PUT that moves the budget',
    method: 'PUT',
    path: '/policies/usage-limits/{budget}',
    body: { credit_limit: 900, workspace_id: `ws_elsewhere_${run}` },
    param: 'workspace_id',
    names: ['workspace_id'],
  },
  {
    what: 'an unknown type in the list query',
    method: 'GET',
    path: '/policies/usage-limits?type=requests',
    param: 'type',
    names: ['type', 'cost or tokens'],
  },
];

beforeAll(async () => {
  ids.guardrail = await created('/guardrails', guardrail([notNull]));
  ids.prompt = await created('/prompts', { name: `validation ${run}`, string: 'Hi' });
  ids.promptWithVariables = await created('/prompts', { name: `validation variables ${run}`, string: 'You are {{persona}}; {{user.name}} asks.' });
  ids.promptWithPartial = await created('/prompts', { name: `validation partial ${run}`, string: `Hi {{>${absentPartial}}}` });
  ids.partial = await created('/prompts/partials', { name: partialName, string: 'x' });
  ids.rateLimit = await created('/policies/rate-limits', rateLimit());
  ids.budget = await created('/policies/usage-limits', budget({ alert_threshold: 500 }));
});

afterAll(async () => {
  const paths = [
    `/guardrails/${ids.guardrail}`,
    `/prompts/${ids.prompt}`,
    `/prompts/${ids.promptWithVariables}`,
    `/prompts/${ids.promptWithPartial}`,
    `/prompts/partials/${ids.partial}`,
    `/policies/rate-limits/${ids.rateLimit}`,
    `/policies/usage-limits/${ids.budget}`,
  ];
  await Promise.all(paths.filter((path) => !path.endsWith('/undefined')).map((path) => call('DELETE', path)));
});

describe.each([
  ['guardrails', guardrailRows],
  ['configs', configRows],
  ['prompts', promptRows],
  ['rate-limit policies', rateLimitRows],
  ['usage-limit policies', budgetRows],
])('validation messages of %s', (_resource, rows) => {
  it.each(rows)('$method $path: $what → $param', async (row) => {
    const path = row.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name] ?? `{${name}}`);
    const answer = await call(row.method, path, row.body);
    expect(answer.status, answer.text).toBe(400);
    const { error } = answer.body;
    expect(error.param, error.message).toBe(row.param);
    for (const name of row.names) expect(error.message).toContain(name);
    if (row.code) expect(error.code).toBe(row.code);
  });
});
