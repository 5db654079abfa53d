// The adapters of the providers with a format of their own, in one chunk loaded on the first call
// to any of them (lazy-adapter.ts): one chunk rather than one per provider, since they share most
// of their code and every chunk is a module the cold start resolves.
export { anthropicAdapter } from './anthropic/adapter';
export { azureAIAdapter } from './azure-ai/adapter';
export { azureOpenAIAdapter } from './azure-openai/adapter';
export { bedrockAdapter } from './bedrock/adapter';
export { cohereAdapter } from './cohere/adapter';
export { googleAdapter } from './google/adapter';
export { vertexAdapter } from './vertex-ai/adapter';
