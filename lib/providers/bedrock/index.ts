import type { ProviderDefinition } from '../types';
import { lazyAdapter } from '../lazy-adapter';
import { bedrockBaseUrl } from './auth';

/**
 * AWS Bedrock Runtime (Converse / ConverseStream; InvokeModel for embeddings), authenticated with
 * SigV4 from `cloudA_*` settings or a Bedrock API key. The host depends on `cloudA_region`.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/welcome.html
 */
export const bedrockProvider: ProviderDefinition = {
  name: 'bedrock',
  baseUrl: 'https://bedrock-runtime.{region}.amazonaws.com',
  baseUrlFor: bedrockBaseUrl,
  operations: ['chat', 'embeddings'],
  adapter: lazyAdapter(() => import('../native-adapters').then((adapters) => adapters.bedrockAdapter)),
};
