import { describe, expect, it } from 'vitest';
import { batchApiProvider } from '../../../lib/batches/provider-batches';
import type { ProviderCatalog } from '../../../lib/catalog/providers';
import type { InferenceOptions } from '../../../lib/inference/inference-request';

const options = (credentials: InferenceOptions['credentials'], config: InferenceOptions['config'] = { kind: 'headers' }): InferenceOptions => ({
  config,
  credentials,
  forwardHeaderNames: [],
  cache: { forceRefresh: false },
});

/** A catalog of two entries of the workspace `ws`: OpenAI at its own host, and OpenAI at a custom one. */
const catalog: ProviderCatalog = {
  async find(workspaceId, slug) {
    const entries: Record<string, { provider: string; custom_host?: string }> = {
      '@openai-prod': { provider: 'openai' },
      'openai-prod': { provider: 'openai' },
      '@local-llm': { provider: 'openai', custom_host: 'http://127.0.0.1:9/v1' },
      '@claude': { provider: 'anthropic' },
    };
    const entry = workspaceId === 'ws' ? entries[slug] : undefined;
    return entry ? ({ ...entry, slug, workspace_id: workspaceId } as never) : undefined;
  },
};
const runner = (window: string, credentials: InferenceOptions['credentials'], config?: InferenceOptions['config'], endpoint = '/v1/chat/completions') =>
  batchApiProvider('ws', { completion_window: window, endpoint }, options(credentials, config), catalog);

describe('which batches run at the provider’s batch API', () => {
  it('a 24h batch for a provider with one, named by x-gateway-provider or by a catalog entry at its own host', async () => {
    for (const provider of ['openai', 'groq', 'together-ai']) expect(await runner('24h', { provider, apiKey: 'k' })).toBe(provider);
    expect(await runner('24h', { provider: '@openai-prod' })).toBe('openai');
    expect(await runner('24h', { virtualKey: 'openai-prod' })).toBe('openai');
    // Anthropic's Message Batches take chat only.
    expect(await runner('24h', { provider: 'anthropic' })).toBe('anthropic');
    expect(await runner('24h', { provider: '@claude' })).toBe('anthropic');
    expect(await runner('24h', { provider: 'openai' }, undefined, '/v1/embeddings')).toBe('openai');
    expect(await runner('24h', { provider: 'mistral-ai' })).toBe('mistral-ai');
  });

  it('not an immediate batch, a provider without one, a custom host (in the headers or the catalog) or a config', async () => {
    expect(await runner('immediate', { provider: 'openai' })).toBeUndefined();
    expect(await runner('24h', { provider: 'anthropic' }, undefined, '/v1/embeddings')).toBeUndefined();
    expect(await runner('24h', { provider: 'mistral-ai' }, undefined, '/v1/completions')).toBeUndefined();
    expect(await runner('24h', { provider: 'deepseek' })).toBeUndefined();
    expect(await runner('24h', { provider: 'openai', customHost: 'http://127.0.0.1:9/v1' })).toBeUndefined();
    expect(await runner('24h', { provider: '@local-llm' })).toBeUndefined();
    expect(await runner('24h', { provider: '@unknown' })).toBeUndefined();
    expect(await runner('24h', { provider: 'openai' }, { kind: 'saved', ref: 'cfg_1' })).toBeUndefined();
  });
});
