import type { ProviderDefinition } from '../types';
import { lazyAdapter } from '../lazy-adapter';

/** Anthropic's Messages API (`x-api-key` auth): chat translated to it, and Messages requests as they are. */
export const anthropicProvider: ProviderDefinition = {
  name: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  operations: ['chat', 'messages'],
  adapter: lazyAdapter(() => import('../native-adapters').then((adapters) => adapters.anthropicAdapter)),
};
