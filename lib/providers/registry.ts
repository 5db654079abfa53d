import { openAICompatibleAdapter } from './openai-compatible/adapter';
import { openAICompatibleProviders } from './openai-compatible/providers';
import { anthropicProvider } from './anthropic/provider';
import { googleProvider } from './google';
import { vertexAiProvider } from './vertex-ai';
import { azureAIProvider } from './azure-ai';
import { azureOpenAIProvider } from './azure-openai/provider';
import { cohereProvider } from './cohere';
import { bedrockProvider } from './bedrock';
import { allOperations } from './capabilities';
import type { ProviderDefinition, ProviderSettings } from './types';

/** Providers with an adapter of their own (one folder each under lib/providers/). */
const nativeProviders: ProviderDefinition[] = [
  anthropicProvider,
  googleProvider,
  vertexAiProvider,
  azureOpenAIProvider,
  azureAIProvider,
  cohereProvider,
  bedrockProvider,
];

const byName = new Map<string, ProviderDefinition>([
  ...openAICompatibleProviders.map((row): [string, ProviderDefinition] => [
    row.name,
    {
      name: row.name,
      baseUrl: row.baseUrl,
      operations: row.responsesApi ? [...allOperations, 'responses'] : allOperations,
      adapter: openAICompatibleAdapter(row),
    },
  ]),
  ...nativeProviders.map((provider): [string, ProviderDefinition] => [provider.name, provider]),
]);

export const providerNames: readonly string[] = [...byName.keys()];

export function findProvider(name: string): ProviderDefinition | undefined {
  return byName.get(name.toLowerCase());
}

let overrides: { source: string; urls: Record<string, string> } | undefined;

/**
 * A provider's base URL. `GATEWAY_PROVIDER_BASE_URLS` (a JSON object of provider name → base URL)
 * lets an operator send a provider's traffic elsewhere, e.g. through an egress proxy or a regional
 * endpoint; a target's `custom_host` takes precedence over both.
 */
export function defaultBaseUrl(provider: ProviderDefinition, settings: ProviderSettings = {}): string {
  const source = process.env.GATEWAY_PROVIDER_BASE_URLS ?? '';
  if (overrides?.source !== source) {
    let urls: Record<string, string> = {};
    if (source) {
      try {
        urls = JSON.parse(source);
      } catch {
        throw new Error('GATEWAY_PROVIDER_BASE_URLS must be a JSON object of provider name to base URL.');
      }
    }
    overrides = { source, urls };
  }
  return overrides.urls[provider.name] ?? (provider.baseUrlFor ? provider.baseUrlFor(settings) : provider.baseUrl);
}
