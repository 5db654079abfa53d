import { describe, expect, it } from 'vitest';
import { findProvider, providerNames } from '../../../lib/providers/registry';
import type { Operation, ProviderCall, ProviderDefinition } from '../../../lib/providers/types';
import { rejectedGatewayError } from '../../support/gateway-error';

const bodies: Record<Operation, Record<string, unknown>> = {
  chat: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  completions: { model: 'm', prompt: 'hi' },
  embeddings: { model: 'm', input: 'hi' },
  responses: { model: 'm', input: 'hi' },
  messages: { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
};

const callFor = (provider: ProviderDefinition, operation: Operation): ProviderCall => ({
  operation,
  body: bodies[operation],
  stream: false,
  target: { provider, baseUrl: 'http://127.0.0.1:9/v1', settings: { api_key: 'k' } },
  forwardHeaders: {},
  requestHeaders: {},
  strictApiCompliance: false,
});

describe('declared operations', () => {
  it('every provider declares what it serves, chat at least', () => {
    for (const name of providerNames) expect(findProvider(name)!.operations, name).toContain('chat');
  });

  it('an operation a provider does not declare is one 400 unsupported_operation, the same for every provider', async () => {
    const refused: string[] = [];
    for (const name of providerNames) {
      const provider = findProvider(name)!;
      for (const operation of ['completions', 'embeddings'] as const) {
        if (provider.operations.includes(operation)) continue;
        const error = await rejectedGatewayError(() => provider.adapter.prepare(callFor(provider, operation)));
        expect(error, `${name} ${operation}`).toMatchObject({ status: 400, code: 'unsupported_operation', param: null });
        expect(error.message, `${name} ${operation}`).toContain(`not supported by ${name}`);
        refused.push(`${name}:${operation}`);
      }
    }
    expect(refused).toEqual(
      expect.arrayContaining([
        'anthropic:completions',
        'anthropic:embeddings',
        'google:completions',
        'bedrock:completions',
        'cohere:completions',
        'vertex-ai:completions',
      ]),
    );
  });

  it('the Responses API is declared by the providers that run it natively, openai and azure-openai; the others refuse it as a native call', async () => {
    const native = providerNames.filter((name) => findProvider(name)!.operations.includes('responses'));
    expect(native.sort()).toEqual(['azure-openai', 'openai']);
    for (const name of providerNames.filter((name) => !native.includes(name))) {
      const provider = findProvider(name)!;
      const error = await rejectedGatewayError(() => provider.adapter.prepare(callFor(provider, 'responses')));
      expect(error, name).toMatchObject({ status: 400, code: 'unsupported_operation', param: null });
      expect(error.message, name).toContain(`not run natively by ${name}`);
    }
  });
});
