import { jsonPath, type PathKey } from '../../core/json-path';
import { isPlainObject } from '../../core/plain-object';
import { type CheckInput, CheckParameterError } from '../check-types';
import { closestNames } from '../closest-names';
import { defineCheck } from '../define-check';
import { fail, optionalObject, requireParameter, stringList, within } from '../parameters';
import { listVerdict, operatorParameter } from './text';

/** Checks on the request itself: its model, metadata, kind and parameters. */

const requestSide = ['request'] as const;

function requestModel(input: CheckInput): string {
  const model = input.request.model;
  if (typeof model !== 'string' || model === '') throw new Error('The request names no model.');
  return model;
}

export const modelWhitelist = defineCheck({
  id: 'default.modelWhitelist',
  sides: requestSide,
  invertible: true,
  parameters: ['models'],
  parse: (params) => ({ models: new Set(stringList(params, 'models', { required: true })) }),
  run({ models }, input) {
    const model = requestModel(input);
    const verdict = models.has(model);
    return { verdict, data: { model, explanation: verdict ? `The model "${model}" is on the list.` : `The model "${model}" is not on the list.` } };
  },
});

interface ModelRules {
  defaults: string[];
  /** metadata key → metadata value → models allowed for it */
  metadata: Map<string, Map<string, string[]>>;
}

function parseModelRules(params: Record<string, unknown>): ModelRules {
  const rules = requireParameter(params, 'rules', 'an object {"defaults": [models], "metadata": {"<key>": {"<value>": [models]}}}');
  if (!isPlainObject(rules)) fail('rules', 'an object {"defaults": [models], "metadata": {"<key>": {"<value>": [models]}}}', rules);
  for (const key of Object.keys(rules)) {
    if (key !== 'defaults' && key !== 'metadata')
      throw new CheckParameterError(['rules', key], `\`rules\` takes \`defaults\` and \`metadata\`; \`${key}\` is not one of them.`);
  }
  const defaults = within(['rules'], () => stringList(rules, 'defaults')).map(String);
  const metadata = new Map<string, Map<string, string[]>>();
  const byKey = rules.metadata ?? {};
  if (!isPlainObject(byKey)) fail(['rules', 'metadata'], 'an object of metadata keys to {"<value>": [models]} objects', byKey);
  for (const [key, values] of Object.entries(byKey)) {
    if (!isPlainObject(values)) fail(['rules', 'metadata', key], 'an object of metadata values to lists of models', values);
    const modelsByValue = new Map<string, string[]>();
    for (const value of Object.keys(values))
      modelsByValue.set(
        value,
        within(['rules', 'metadata', key], () => stringList(values, value, { allowCommaString: false })),
      );
    metadata.set(key, modelsByValue);
  }
  if (defaults.length === 0 && metadata.size === 0)
    throw new CheckParameterError('rules', '`rules` allows no model: give `defaults`, `metadata` rules, or both.');
  return { defaults, metadata };
}

export const modelRules = defineCheck({
  id: 'default.modelRules',
  sides: requestSide,
  invertible: true,
  parameters: ['rules'],
  parse: parseModelRules,
  run({ defaults, metadata }, input) {
    const model = requestModel(input);
    const allowed = new Set<string>();
    const matchedRules: string[] = [];
    for (const [key, modelsByValue] of metadata) {
      const given = input.metadata[key];
      if (given === undefined || given === null) continue;
      for (const value of Array.isArray(given) ? given : [given]) {
        const models = modelsByValue.get(String(value));
        if (!models) continue;
        matchedRules.push(`${key}:${String(value)}`);
        for (const item of models) allowed.add(item);
      }
    }
    // Rules that match replace the defaults; the defaults apply only when none does.
    const usingDefaults = matchedRules.length === 0;
    const list = usingDefaults ? defaults : [...allowed];
    if (list.length === 0)
      throw new Error(
        usingDefaults
          ? 'No metadata rule matched the request and `rules.defaults` is empty.'
          : `The matching rules (${matchedRules.join(', ')}) allow no model.`,
      );
    const verdict = list.includes(model);
    return {
      verdict,
      data: {
        model,
        allowedModels: list,
        matchedRules,
        explanation: `The model "${model}" is ${verdict ? '' : 'not '}allowed by ${usingDefaults ? 'the default models' : `the rules ${matchedRules.join(', ')}`}.`,
      },
    };
  },
});

export const requiredMetadataKeys = defineCheck({
  id: 'default.requiredMetadataKeys',
  sides: requestSide,
  invertible: false,
  parameters: ['metadataKeys', 'operator'],
  parse: (params) => ({ keys: stringList(params, 'metadataKeys', { required: true }), operator: operatorParameter(params, 'all') }),
  run({ keys, operator }, input) {
    const present = keys.filter((key) => Object.hasOwn(input.metadata, key));
    const missing = keys.filter((key) => !present.includes(key));
    const verdict = listVerdict(operator, present.length, keys.length);
    return {
      verdict,
      data: { operator, present, missing, explanation: `${present.length} of ${keys.length} metadata keys present (operator "${operator}").` },
    };
  },
});

/** Request types as configs written for the peer gateway name them, and this gateway's operation names. */
const requestTypeNames = [
  'chat',
  'completions',
  'embeddings',
  'responses',
  'chatComplete',
  'stream-chatComplete',
  'complete',
  'stream-complete',
  'embed',
  'rerank',
  'moderate',
  'stream-messages',
  'messages',
  'proxy',
  'imageGenerate',
  'createSpeech',
  'createTranscription',
  'createTranslation',
  'realtime',
  'uploadFile',
  'listFiles',
  'retrieveFile',
  'deleteFile',
  'retrieveFileContent',
  'createBatch',
  'retrieveBatch',
  'cancelBatch',
  'listBatches',
  'getBatchOutput',
  'listFinetunes',
  'createFinetune',
  'retrieveFinetune',
  'cancelFinetune',
  'createModelResponse',
  'getModelResponse',
  'deleteModelResponse',
  'listResponseInputItems',
];

/** The names a request answers to: its operation, and the peer's name for it with and without streaming. */
function requestTypes(input: CheckInput): string[] {
  const stream = input.request.stream === true;
  switch (input.operation) {
    case 'chat':
      return ['chat', stream ? 'stream-chatComplete' : 'chatComplete'];
    case 'completions':
      return ['completions', stream ? 'stream-complete' : 'complete'];
    case 'embeddings':
      return ['embeddings', 'embed'];
    // The peer names a create the same whether it streams or not.
    case 'responses':
      return ['responses', 'createModelResponse'];
    case 'messages':
      return ['messages', stream ? 'stream-messages' : 'messages'];
  }
}

function requestTypeList(params: Record<string, unknown>, name: string): string[] {
  const list = stringList(params, name);
  list.forEach((item, index) => {
    if (requestTypeNames.includes(item)) return;
    const close = closestNames(item, requestTypeNames, 3);
    throw new CheckParameterError(
      [name, index],
      `\`${name}[${index}]\` is an unknown request type ${JSON.stringify(item)}${close.length ? ` — did you mean ${close.map((c) => `"${c}"`).join(' or ')}?` : ''} Use chat, completions, embeddings, responses (or chatComplete, stream-chatComplete, complete, stream-complete, embed, createModelResponse).`,
    );
  });
  return list;
}

/** Metadata may carry the lists instead (`supported_endpoints`, `blocked_endpoints`), as a list or a comma-separated string. */
function metadataList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  if (typeof value === 'string')
    return value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  return [];
}

export const allowedRequestTypes = defineCheck({
  id: 'default.allowedRequestTypes',
  sides: requestSide,
  invertible: false,
  parameters: ['allowedTypes', 'blockedTypes'],
  parse(params) {
    const allowed = requestTypeList(params, 'allowedTypes');
    const blocked = requestTypeList(params, 'blockedTypes');
    const both = allowed.filter((item) => blocked.includes(item));
    if (both.length > 0)
      throw new CheckParameterError(
        'blockedTypes',
        `${both.map((item) => `"${item}"`).join(', ')} ${both.length === 1 ? 'is' : 'are'} in both \`allowedTypes\` and \`blockedTypes\`; remove it from one.`,
      );
    return { allowed, blocked };
  },
  run(params, input) {
    const allowed = params.allowed.length > 0 ? params.allowed : metadataList(input.metadata.supported_endpoints);
    const blocked = params.blocked.length > 0 ? params.blocked : metadataList(input.metadata.blocked_endpoints);
    const names = requestTypes(input);
    const isBlocked = names.some((name) => blocked.includes(name));
    const isAllowed = allowed.length === 0 || names.some((name) => allowed.includes(name));
    const verdict = !isBlocked && isAllowed;
    return {
      verdict,
      data: {
        requestType: names[1],
        explanation: isBlocked
          ? `Requests of type ${names[1]} are blocked.`
          : isAllowed
            ? `Requests of type ${names[1]} are allowed.`
            : `Requests of type ${names[1]} are not on the allowed list.`,
      },
    };
  },
});

type Primitive = string | number | boolean;

// Sets, since a request may declare many tools and parameters and each is looked up in every list.
interface ParameterRules {
  tools: { allowedTypes: Set<string>; blockedTypes: Set<string>; allowedFunctionNames: Set<string>; blockedFunctionNames: Set<string> };
  params: { allowedKeys: Set<string>; blockedKeys: Set<string>; values: Map<string, { allowedValues?: Primitive[]; blockedValues?: Primitive[] }> };
}

const maxValuesListed = 1_000;

function primitiveList(owner: Record<string, unknown>, name: string, path: readonly PathKey[]): Primitive[] | undefined {
  const value = owner[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) fail(path, 'a list of strings, numbers or booleans', value);
  if (value.length > maxValuesListed)
    throw new CheckParameterError(path, `\`${jsonPath('', path)}\` has ${value.length} items; at most ${maxValuesListed} are allowed.`);
  value.forEach((item, index) => {
    if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') fail([...path, index], 'a string, number or boolean', item);
  });
  return value as Primitive[];
}

function refuseOthers(owner: Record<string, unknown>, known: readonly string[], path: readonly PathKey[]): void {
  for (const key of Object.keys(owner)) {
    if (known.includes(key)) continue;
    const close = closestNames(key, known, 1)[0];
    throw new CheckParameterError(
      [...path, key],
      `\`${jsonPath('', path)}\` takes ${known.map((item) => `\`${item}\``).join(', ')}; \`${key}\` is not one of them${close ? ` — did you mean \`${close}\`?` : '.'}`,
    );
  }
}

function parseParameterRules(params: Record<string, unknown>): ParameterRules {
  const tools = optionalObject(params, 'tools') ?? {};
  const toolKeys = ['allowedTypes', 'blockedTypes', 'allowedFunctionNames', 'blockedFunctionNames'] as const;
  refuseOthers(tools, toolKeys, ['tools']);
  const paramRules = optionalObject(params, 'params') ?? {};
  refuseOthers(paramRules, ['allowedKeys', 'blockedKeys', 'values'], ['params']);
  const valuesObject = within(['params'], () => optionalObject(paramRules, 'values')) ?? {};
  const values = new Map<string, { allowedValues?: Primitive[]; blockedValues?: Primitive[] }>();
  for (const [key, rule] of Object.entries(valuesObject)) {
    const path = ['params', 'values', key];
    if (!isPlainObject(rule)) fail(path, 'an object with `allowedValues` and/or `blockedValues`', rule);
    refuseOthers(rule, ['allowedValues', 'blockedValues'], path);
    values.set(key, {
      allowedValues: primitiveList(rule, 'allowedValues', [...path, 'allowedValues']),
      blockedValues: primitiveList(rule, 'blockedValues', [...path, 'blockedValues']),
    });
  }
  const list = (owner: Record<string, unknown>, name: string, path: string) =>
    within([path], () => new Set(stringList(owner, name, { allowCommaString: false })));
  return {
    tools: {
      allowedTypes: list(tools, 'allowedTypes', 'tools'),
      blockedTypes: list(tools, 'blockedTypes', 'tools'),
      allowedFunctionNames: list(tools, 'allowedFunctionNames', 'tools'),
      blockedFunctionNames: list(tools, 'blockedFunctionNames', 'tools'),
    },
    params: { allowedKeys: list(paramRules, 'allowedKeys', 'params'), blockedKeys: list(paramRules, 'blockedKeys', 'params'), values },
  };
}

/** The tools a request declares, as (type, name): `tools[]` and the deprecated `functions[]`. */
function declaredTools(request: Record<string, unknown>): { type: string; name: string | undefined }[] {
  const found: { type: string; name: string | undefined }[] = [];
  if (Array.isArray(request.tools)) {
    for (const tool of request.tools) {
      if (!isPlainObject(tool)) continue;
      const type = typeof tool.type === 'string' ? tool.type : 'function';
      const fn = isPlainObject(tool.function) ? tool.function : undefined;
      const name = typeof fn?.name === 'string' ? fn.name : typeof tool.name === 'string' ? tool.name : undefined;
      found.push({ type, name });
    }
  }
  if (Array.isArray(request.functions)) {
    for (const fn of request.functions) if (isPlainObject(fn)) found.push({ type: 'function', name: typeof fn.name === 'string' ? fn.name : undefined });
  }
  return found;
}

export const requestParametersCheck = defineCheck({
  id: 'default.requestParametersCheck',
  sides: requestSide,
  invertible: false,
  parameters: ['tools', 'params'],
  parse: parseParameterRules,
  run({ tools, params }, input) {
    const violations: { rule: string; value: unknown; message: string }[] = [];
    for (const { type, name } of declaredTools(input.request)) {
      if (tools.blockedTypes.has(type)) violations.push({ rule: 'tools.blockedTypes', value: type, message: `Tools of type "${type}" are blocked.` });
      else if (tools.allowedTypes.size > 0 && !tools.allowedTypes.has(type))
        violations.push({ rule: 'tools.allowedTypes', value: type, message: `Tools of type "${type}" are not allowed.` });
      if (name === undefined) continue;
      if (tools.blockedFunctionNames.has(name))
        violations.push({ rule: 'tools.blockedFunctionNames', value: name, message: `The function "${name}" is blocked.` });
      else if (tools.allowedFunctionNames.size > 0 && !tools.allowedFunctionNames.has(name))
        violations.push({ rule: 'tools.allowedFunctionNames', value: name, message: `The function "${name}" is not allowed.` });
    }
    for (const key of Object.keys(input.request)) {
      if (params.blockedKeys.has(key)) violations.push({ rule: 'params.blockedKeys', value: key, message: `The parameter "${key}" is blocked.` });
      else if (params.allowedKeys.size > 0 && !params.allowedKeys.has(key))
        violations.push({ rule: 'params.allowedKeys', value: key, message: `The parameter "${key}" is not allowed.` });
    }
    for (const [key, { allowedValues, blockedValues }] of params.values) {
      if (!Object.hasOwn(input.request, key)) continue;
      const value = input.request[key];
      if (blockedValues?.includes(value as Primitive))
        violations.push({ rule: `params.values.${key}.blockedValues`, value, message: `"${key}" may not be ${JSON.stringify(value)}.` });
      else if (allowedValues && !allowedValues.includes(value as Primitive))
        violations.push({
          rule: `params.values.${key}.allowedValues`,
          value,
          message: `"${key}" may only be ${allowedValues.map((item) => JSON.stringify(item)).join(', ')}.`,
        });
    }
    const verdict = violations.length === 0;
    return {
      verdict,
      data: { violations, explanation: verdict ? 'The request follows every parameter rule.' : violations.map((item) => item.message).join(' ') },
    };
  },
});
