import type { ProviderDefinition } from '../types';
import { lazyAdapter } from '../lazy-adapter';
import { vertexBaseUrl, vertexBaseUrlTemplate } from './url';

/** Google Vertex AI (OAuth access tokens: a service account key, or a token sent by the client). */
export const vertexAiProvider: ProviderDefinition = {
  name: 'vertex-ai',
  baseUrl: vertexBaseUrlTemplate,
  baseUrlFor: vertexBaseUrl,
  operations: ['chat', 'embeddings'],
  adapter: lazyAdapter(() => import('../native-adapters').then((adapters) => adapters.vertexAdapter)),
};
