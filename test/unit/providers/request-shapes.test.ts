import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../lib/core/errors';
import { validateInferenceBody } from '../../../lib/inference/validate';
import { findProvider } from '../../../lib/providers/registry';
import type { ProviderCall, ProviderSettings } from '../../../lib/providers/types';

/**
 * Whatever shape a client gives the OpenAI fields the adapters translate, a body that passes the
 * route's validation either becomes a provider request or is refused with a 400 — never a crash
 * that the route would report as the provider's failure.
 */
const settingsFor: Record<string, ProviderSettings> = {
  anthropic: { api_key: 'sk-ant' },
  google: { api_key: 'g-key' },
  'vertex-ai': { api_key: 'ya29.token', cloudB_project_id: 'p', cloudB_region: 'us-central1' },
  bedrock: { cloudA_access_key_id: 'AKIDUNIT', cloudA_secret_access_key: 'secret', cloudA_region: 'eu-west-1' },
  cohere: { api_key: 'co-key' },
  'azure-openai': { api_key: 'az-key', resource_name: 'r', cloudC_deployment_id: 'd', cloudC_api_version: '2024-10-21' },
  'azure-ai': { api_key: 'az-key', cloudC_resource_name: 'r' },
  'mistral-ai': { api_key: 'm-key' },
  openai: { api_key: 'sk' },
};

const scalar = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 6 }), fc.constant({}), fc.constant([]));
const wild = <T>(typical: fc.Arbitrary<T>) => fc.oneof(typical, scalar, fc.array(scalar, { maxLength: 2 }));
const functionPart = fc.record(
  {
    name: wild(fc.constant('f')),
    arguments: wild(fc.constantFrom('{}', '{"a":1}', 'not json')),
    description: wild(fc.constant('d')),
    parameters: wild(fc.constant({ type: 'object' })),
  },
  { requiredKeys: [] },
);
const contentPart = fc.record(
  {
    type: wild(fc.constantFrom('text', 'image_url', 'input_audio', 'file', 'refusal')),
    text: wild(fc.constant('hi')),
    image_url: wild(
      fc.record({ url: wild(fc.constantFrom('data:image/png;base64,iVBORw0KGgo=', 'data:,x', 'x')), detail: wild(fc.constant('low')) }, { requiredKeys: [] }),
    ),
    input_audio: wild(fc.record({ data: wild(fc.constant('AAAA')), format: wild(fc.constant('wav')) }, { requiredKeys: [] })),
    file: wild(fc.record({ file_data: wild(fc.constant('data:application/pdf;base64,AAAA')), filename: wild(fc.constant('a.pdf')) }, { requiredKeys: [] })),
  },
  { requiredKeys: [] },
);
const toolCall = fc.record({ id: wild(fc.constant('call_1')), type: wild(fc.constant('function')), function: wild(functionPart) }, { requiredKeys: [] });
const message = fc.record(
  {
    role: fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function'),
    content: wild(fc.oneof(fc.constant('hi'), fc.array(wild(contentPart), { maxLength: 3 }))),
    tool_calls: wild(fc.array(wild(toolCall), { maxLength: 2 })),
    tool_call_id: wild(fc.constant('call_1')),
    name: wild(fc.constant('n')),
  },
  { requiredKeys: ['role'] },
);
const body = fc.record(
  {
    model: fc.constantFrom('m', 'claude-sonnet-4', 'gemini-2.5-flash', 'anthropic.claude-3-haiku', 'command-r'),
    messages: fc.array(message, { minLength: 1, maxLength: 4 }),
    tools: wild(fc.array(wild(fc.record({ type: wild(fc.constant('function')), function: wild(functionPart) }, { requiredKeys: [] })), { maxLength: 2 })),
    tool_choice: wild(
      fc.oneof(
        fc.constantFrom('auto', 'none', 'required'),
        fc.record({ type: wild(fc.constant('function')), function: wild(fc.record({ name: wild(fc.constant('f')) })) }),
      ),
    ),
    stop: wild(fc.oneof(fc.constant('x'), fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }))),
    response_format: wild(
      fc.record(
        {
          type: wild(fc.constantFrom('json_object', 'json_schema', 'text')),
          json_schema: wild(fc.record({ name: wild(fc.constant('s')), schema: wild(fc.constant({ type: 'object' })) }, { requiredKeys: [] })),
        },
        { requiredKeys: [] },
      ),
    ),
    max_tokens: wild(fc.integer({ min: 1, max: 100 })),
    temperature: wild(fc.double({ min: 0, max: 2, noNaN: true })),
    top_p: wild(fc.double({ min: 0, max: 1, noNaN: true })),
    n: wild(fc.integer({ min: 1, max: 2 })),
    stream_options: wild(fc.record({ include_usage: wild(fc.boolean()) }, { requiredKeys: [] })),
    reasoning_effort: wild(fc.constantFrom('low', 'high')),
    thinking: wild(fc.record({ type: wild(fc.constant('enabled')), budget_tokens: wild(fc.integer({ min: 1, max: 2048 })) }, { requiredKeys: [] })),
    user: wild(fc.constant('u')),
    seed: wild(fc.integer()),
  },
  { requiredKeys: ['model', 'messages'] },
);

describe('provider adapters on any shape of the OpenAI fields they translate', () => {
  for (const name of Object.keys(settingsFor)) {
    it(`${name}: a validated body becomes a request or a 400`, async () => {
      const provider = findProvider(name)!;
      await fc.assert(
        fc.asyncProperty(body, fc.boolean(), async (input, stream) => {
          const request = structuredClone({ ...input, stream });
          try {
            validateInferenceBody('chat', request);
          } catch (error) {
            expect((error as GatewayError).status).toBe(400);
            return;
          }
          const call: ProviderCall = {
            operation: 'chat',
            body: request,
            stream,
            target: { provider, baseUrl: 'http://127.0.0.1:9/v1', settings: settingsFor[name]! },
            forwardHeaders: {},
            requestHeaders: {},
            strictApiCompliance: false,
          };
          try {
            await provider.adapter.prepare(call);
          } catch (error) {
            if (!(error instanceof GatewayError) || error.status !== 400)
              throw new Error(`${name} failed on ${JSON.stringify(request)}: ${(error as Error).stack}`);
          }
        }),
        { numRuns: 400, seed: 20261125 },
      );
    });
  }
});

describe('a model or deployment that would be a dot segment of the provider path', () => {
  const cases: [string, ProviderSettings, string][] = [
    ['bedrock', settingsFor.bedrock!, '..'],
    ['google', settingsFor.google!, '..'],
    ['vertex-ai', settingsFor['vertex-ai']!, 'google...'],
    ['azure-openai', { api_key: 'az-key', resource_name: 'r', cloudC_api_version: '2024-10-21' }, '..'],
    ['azure-openai', { ...settingsFor['azure-openai']!, cloudC_deployment_id: '.' }, 'gpt-4o'],
  ];
  for (const [name, settings, model] of cases) {
    it(`${name}: ${JSON.stringify(model)} with ${JSON.stringify(settings.cloudC_deployment_id ?? null)} is a 400, not another path`, async () => {
      const provider = findProvider(name)!;
      const call: ProviderCall = {
        operation: 'chat',
        body: { model, messages: [{ role: 'user', content: 'hi' }] },
        stream: false,
        target: { provider, baseUrl: 'http://127.0.0.1:9/v1', settings },
        forwardHeaders: {},
        requestHeaders: {},
        strictApiCompliance: false,
      };
      const error = await Promise.resolve()
        .then(() => provider.adapter.prepare(call))
        .then(
          (prepared) => new Error(`prepared ${prepared.url.href}`),
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ status: 400, code: 'invalid_value' });
    });
  }
});
