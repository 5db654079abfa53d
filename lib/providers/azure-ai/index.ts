import { allOperations } from '../capabilities';
import type { ProviderDefinition } from '../types';
import { lazyAdapter } from '../lazy-adapter';
import { azureAIBaseUrl } from './request';

/** Azure AI Foundry models and Azure ML endpoints through the Azure AI model inference API. */
export const azureAIProvider: ProviderDefinition = {
  name: 'azure-ai',
  baseUrl: 'https://{resource}.services.ai.azure.com/models',
  baseUrlFor: azureAIBaseUrl,
  operations: allOperations,
  adapter: lazyAdapter(() => import('../native-adapters').then((adapters) => adapters.azureAIAdapter)),
};
