import type { ProviderDefinition } from '../types';
import { lazyAdapter } from '../lazy-adapter';

/** Cohere's v2 API (Bearer auth): chat, streaming, tools, vision and embeddings. */
export const cohereProvider: ProviderDefinition = {
  name: 'cohere',
  baseUrl: 'https://api.cohere.com/v2',
  operations: ['chat', 'embeddings'],
  adapter: lazyAdapter(() => import('../native-adapters').then((adapters) => adapters.cohereAdapter)),
};
