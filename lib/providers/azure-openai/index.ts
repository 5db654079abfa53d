export { azureOpenAIProvider } from './provider';

// For other Azure hosts of OpenAI-format models (azure-ai).
export { prepareOnAzure, type AzureRoute } from './adapter';
export { azureAuthHeaders, bearerAuthHeaders } from './auth';
export { hostLabel } from './request';
export { promptFilterHook } from './stream';
