import { badRequest } from '../../core/errors';
import { hostLabel } from '../azure-openai/request';
import type { OpenAIOperation } from '../capabilities';
import type { ProviderSettings } from '../types';

/**
 * The Azure AI model inference API version sent when a target names none.
 * @see https://learn.microsoft.com/azure/ai-foundry/model-inference/reference/reference-model-inference-api
 */
export const defaultApiVersion = '2024-05-01-preview';

const provider = 'azure-ai';

type Kind = 'foundry' | 'serverless' | 'managed';

/** Which kind of Azure endpoint a target's settings describe (see {@link azureAIBaseUrl}). */
export function endpointKind(settings: ProviderSettings): Kind {
  if (settings.cloudC_deployment_type === 'managed') return 'managed';
  if (settings.cloudC_deployment_type === 'serverless' || settings.cloudC_endpoint_name) return 'serverless';
  return 'foundry';
}

function required(value: string | undefined, field: string, why: string): string {
  if (!value) throw badRequest(`${provider} needs ${field} ${why}, or a custom_host.`, field, 'missing_provider_settings');
  return hostLabel(provider, field, value);
}

/**
 * The base URL of the target's endpoint — what a `custom_host` replaces; the operation path
 * (`/chat/completions`, `/embeddings`, `/completions`) and `?api-version=` follow it.
 * - `cloudC_deployment_type: "serverless"` (pay-as-you-go models):
 *   `https://{cloudC_endpoint_name, else cloudC_deployment_name}.{cloudC_region}.models.ai.azure.com`
 * - `cloudC_deployment_type: "managed"` (Azure ML managed online endpoints serving the model
 *   inference API): `https://{cloudC_endpoint_name}.{cloudC_region}.inference.ml.azure.com`
 * - otherwise an Azure AI Foundry resource: `https://{cloudC_resource_name}.services.ai.azure.com/models`
 * @see https://learn.microsoft.com/azure/ai-foundry/model-inference/how-to/inference
 */
export function azureAIBaseUrl(settings: ProviderSettings): string {
  switch (endpointKind(settings)) {
    case 'managed': {
      const endpoint = required(settings.cloudC_endpoint_name, 'cloudC_endpoint_name', 'for a managed endpoint');
      return `https://${endpoint}.${required(settings.cloudC_region, 'cloudC_region', 'for a managed endpoint')}.inference.ml.azure.com`;
    }
    case 'serverless': {
      const endpoint = required(
        settings.cloudC_endpoint_name ?? settings.cloudC_deployment_name,
        'cloudC_endpoint_name',
        '(or cloudC_deployment_name) for a serverless endpoint',
      );
      return `https://${endpoint}.${required(settings.cloudC_region, 'cloudC_region', 'for a serverless endpoint')}.models.ai.azure.com`;
    }
    default:
      return `https://${required(settings.cloudC_resource_name ?? settings.resource_name, 'cloudC_resource_name', 'for an Azure AI Foundry resource (or cloudC_deployment_type with cloudC_endpoint_name and cloudC_region)')}.services.ai.azure.com/models`;
  }
}

const operationPaths: Record<OpenAIOperation, string> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  responses: '/responses',
};

export function azureAIUrl(baseUrl: string, operation: OpenAIOperation, settings: ProviderSettings): URL {
  const url = new URL(baseUrl + operationPaths[operation]);
  url.searchParams.set('api-version', settings.cloudC_api_version ?? settings.api_version ?? defaultApiVersion);
  return url;
}
