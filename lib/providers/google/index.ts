import type { ProviderDefinition } from '../types';
import { lazyAdapter } from '../lazy-adapter';

/** Google's Gemini API (`x-goog-api-key` auth). */
export const googleProvider: ProviderDefinition = {
  name: 'google',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  operations: ['chat', 'embeddings'],
  adapter: lazyAdapter(() => import('../native-adapters').then((adapters) => adapters.googleAdapter)),
};
