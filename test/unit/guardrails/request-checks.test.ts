import { describe, expect, it } from 'vitest';
import type { CheckInput } from '../../../lib/guardrails';
import { checkInput, run } from './check-input';

const chat = (request: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}, operation: CheckInput['operation'] = 'chat') =>
  checkInput('hi', { operation, metadata, request: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...request } });

describe('request checks', () => {
  it.each([
    ['modelWhitelist allows a listed model', 'default.modelWhitelist', { models: ['gpt-4o', 'gpt-4o-mini'] }, chat(), true],
    ['modelWhitelist blocks another', 'default.modelWhitelist', { models: ['gpt-4o-mini'] }, chat(), false],
    ['modelWhitelist inverted is a block list', 'default.modelwhitelist', { models: ['gpt-4o'], not: true }, chat(), false],
    [
      'modelRules: a metadata rule allows',
      'default.modelRules',
      { rules: { defaults: ['gpt-4o-mini'], metadata: { tier: { pro: ['gpt-4o'] } } } },
      chat({}, { tier: 'pro' }),
      true,
    ],
    [
      'modelRules: a matching rule replaces the defaults',
      'default.modelRules',
      { rules: { defaults: ['gpt-4o'], metadata: { tier: { free: ['gpt-4o-mini'] } } } },
      chat({}, { tier: 'free' }),
      false,
    ],
    [
      'modelRules: defaults when no rule matches',
      'default.modelRules',
      { rules: { defaults: ['gpt-4o'], metadata: { tier: { free: ['gpt-4o-mini'] } } } },
      chat({}, { tier: 'other' }),
      true,
    ],
    ['modelRules: metadata lists', 'default.modelRules', { rules: { metadata: { team: { a: ['x'], b: ['gpt-4o'] } } } }, chat({}, { team: ['a', 'b'] }), true],
    ['requiredMetadataKeys all present', 'default.requiredMetadataKeys', { metadataKeys: ['user', 'team'] }, chat({}, { user: 'u', team: 't' }), true],
    ['requiredMetadataKeys one missing', 'default.requiredMetadataKeys', { metadataKeys: ['user', 'team'] }, chat({}, { user: 'u' }), false],
    ['requiredMetadataKeys any', 'default.requiredMetadataKeys', { metadataKeys: ['user', 'team'], operator: 'any' }, chat({}, { user: 'u' }), true],
    ['requiredMetadataKeys none', 'default.requiredMetadataKeys', { metadataKeys: ['debug'], operator: 'none' }, chat({}, { debug: 1 }), false],
    ['allowedRequestTypes allows chat', 'default.allowedRequestTypes', { allowedTypes: ['chatComplete'] }, chat(), true],
    ['allowedRequestTypes tells streams apart', 'default.allowedRequestTypes', { allowedTypes: ['chatComplete'] }, chat({ stream: true }), false],
    ['allowedRequestTypes by operation name', 'default.allowedRequestTypes', { allowedTypes: ['chat'] }, chat({ stream: true }), true],
    ['allowedRequestTypes blocks embeddings', 'default.allowedRequestTypes', { blockedTypes: ['embed'] }, chat({}, {}, 'embeddings'), false],
    ['allowedRequestTypes from metadata', 'default.allowedRequestTypes', {}, chat({}, { supported_endpoints: 'embed,complete' }), false],
    ['allowedRequestTypes unrestricted', 'default.allowedRequestTypes', {}, chat(), true],
  ])('%s', async (_name, id, parameters, input, verdict) => {
    const result = await run(id, parameters, input);
    expect(result.error).toBeUndefined();
    expect(result.verdict).toBe(verdict);
  });

  it.each([
    ['default.modelWhitelist', {}, /`models` is required/],
    ['default.modelRules', { rules: [] }, /`rules` must be an object/],
    ['default.modelRules', { rules: { default: ['x'] } }, /`default` is not one of them/],
    ['default.modelRules', { rules: {} }, /allows no model/],
    ['default.requiredMetadataKeys', { metadataKeys: 'a', operator: 'most' }, /"any", "all", "none"/],
    ['default.allowedRequestTypes', { allowedTypes: ['chatCompletion'] }, /did you mean "chatComplete"/],
    ['default.allowedRequestTypes', { allowedTypes: ['chat'], blockedTypes: ['chat'] }, /in both/],
    ['default.requestParametersCheck', { tools: { blockedFunctionName: ['x'] } }, /did you mean `blockedFunctionNames`/],
    ['default.requestParametersCheck', { params: { values: { model: { allowedValues: [{}] } } } }, /params.values.model.allowedValues\[0\]/],
  ])('%s refuses %j', async (id, parameters, message) => {
    const result = await run(id, { ...parameters, failOnError: true }, chat());
    expect(result.verdict).toBe(false);
    expect(result.error).toMatch(message);
  });

  it('modelWhitelist errs on a request without a model', async () => {
    const result = await run('default.modelWhitelist', { models: ['x'], failOnError: true }, checkInput('hi', { request: { messages: [] } }));
    expect(result).toMatchObject({ verdict: false, error: 'The request names no model.' });
  });

  describe('requestParametersCheck', () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: {} } }, { type: 'web_search_preview' }];
    it.each([
      ['allows a request that breaks no rule', { tools: { allowedTypes: ['function', 'web_search_preview'] } }, { tools }, true],
      ['blocks a tool type', { tools: { blockedTypes: ['web_search_preview'] } }, { tools }, false],
      ['holds tool types to the allow list', { tools: { allowedTypes: ['function'] } }, { tools }, false],
      ['blocks a function name', { tools: { blockedFunctionNames: ['get_weather'] } }, { tools }, false],
      ['holds function names to the allow list', { tools: { allowedFunctionNames: ['lookup'] } }, { tools }, false],
      ['sees deprecated functions', { tools: { blockedFunctionNames: ['legacy'] } }, { functions: [{ name: 'legacy' }] }, false],
      ['blocks a parameter', { params: { blockedKeys: ['logprobs'] } }, { logprobs: true }, false],
      ['holds parameters to the allow list', { params: { allowedKeys: ['model', 'messages'] } }, { temperature: 1 }, false],
      ['allows listed parameters', { params: { allowedKeys: ['model', 'messages', 'temperature'] } }, { temperature: 1 }, true],
      ['blocks a value', { params: { values: { stream: { blockedValues: [true] } } } }, { stream: true }, false],
      ['holds a value to its allow list', { params: { values: { model: { allowedValues: ['gpt-4o-mini'] } } } }, {}, false],
      ['ignores value rules for absent parameters', { params: { values: { temperature: { allowedValues: [0] } } } }, {}, true],
    ])('%s', async (_name, parameters, request, verdict) => {
      const result = await run('default.requestParametersCheck', parameters, chat(request));
      expect(result.error).toBeUndefined();
      expect(result.verdict).toBe(verdict);
    });

    it('lists every violation', async () => {
      const result = await run(
        'default.requestParametersCheck',
        { tools: { blockedTypes: ['web_search_preview'] }, params: { blockedKeys: ['tools'] } },
        chat({ tools }),
      );
      expect((result.data as { violations: { rule: string }[] }).violations.map((violation) => violation.rule)).toEqual([
        'tools.blockedTypes',
        'params.blockedKeys',
      ]);
    });
  });
});
