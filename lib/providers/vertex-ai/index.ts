import type { ProviderDefinition } from '../types';
import { vertexAdapter } from './adapter';
import { vertexBaseUrl, vertexBaseUrlTemplate } from './url';

/** Google Vertex AI (OAuth access tokens: a service account key, or a token sent by the client). */
export const vertexAiProvider: ProviderDefinition = {
  name: 'vertex-ai',
  baseUrl: vertexBaseUrlTemplate,
  baseUrlFor: vertexBaseUrl,
  operations: ['chat', 'embeddings'],
  adapter: vertexAdapter,
};
