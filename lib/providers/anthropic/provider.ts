import type { ProviderDefinition } from '../types';
import { lazyAdapter } from '../lazy-adapter';

/** Anthropic's Messages API (`x-api-key` auth). */
export const anthropicProvider: ProviderDefinition = {
  name: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  operations: ['chat'],
  adapter: lazyAdapter(() => import('../native-adapters').then((adapters) => adapters.anthropicAdapter)),
};
