import { allOperations } from '../capabilities';
import type { ProviderDefinition } from '../types';
import { lazyAdapter } from '../lazy-adapter';
import { azureOpenAIBaseUrl, azureResourceApiPath } from './request';

/** Azure OpenAI: deployment-scoped OpenAI API on `{resource}.openai.azure.com` (`api-key` or Entra ID bearer auth). */
export const azureOpenAIProvider: ProviderDefinition = {
  name: 'azure-openai',
  baseUrl: 'https://{resource}.openai.azure.com/openai',
  baseUrlFor: azureOpenAIBaseUrl,
  resourceApiPath: azureResourceApiPath,
  // The Responses API runs natively, as at OpenAI (request.ts says where).
  operations: [...allOperations, 'responses'],
  adapter: lazyAdapter(() => import('../native-adapters').then((adapters) => adapters.azureOpenAIAdapter)),
};
