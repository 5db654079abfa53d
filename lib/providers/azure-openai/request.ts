import { badRequest } from '../../core/errors';
import type { OpenAIOperation } from '../capabilities';
import type { ProviderSettings } from '../types';
import { pathSegment } from '../path-segment';

/**
 * The api-version sent when a target names none: the newest GA version of the data-plane API.
 * @see https://learn.microsoft.com/azure/ai-services/openai/api-version-lifecycle
 */
export const defaultApiVersion = '2024-10-21';

/** Versions that select the v1 API (`/openai/v1/…`, OpenAI's paths, the deployment named by `model`). */
const v1Versions = new Set(['v1', 'preview', 'latest']);

/** A DNS label the gateway puts into an Azure host name (a resource, endpoint or region name). */
export function hostLabel(provider: string, field: string, value: string): string {
  if (!/^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/.test(value)) {
    throw badRequest(
      `${provider}: ${field} must be letters, digits and hyphens (it becomes part of the host name); got "${value.slice(0, 100)}".`,
      field,
      'invalid_provider_settings',
    );
  }
  return value.toLowerCase();
}

/**
 * `https://{resource}.openai.azure.com/openai` — what a `custom_host` replaces. The deployment and
 * operation paths and the api-version follow it.
 * @see https://learn.microsoft.com/azure/ai-services/openai/reference
 */
export function azureOpenAIBaseUrl(settings: ProviderSettings): string {
  const resource = settings.cloudC_resource_name ?? settings.resource_name;
  if (!resource) {
    throw badRequest(
      'azure-openai needs the resource name: cloudC_resource_name (or resource_name) in the config, or the x-gateway-cloudC-resource-name header; or a custom_host.',
      'cloudC_resource_name',
      'missing_provider_settings',
    );
  }
  return `https://${hostLabel('azure-openai', 'cloudC_resource_name', resource)}.openai.azure.com/openai`;
}

export interface AzureDeploymentChoice {
  deployment: string;
  apiVersion: string;
}

/**
 * The deployment a request goes to and its api-version. With `deployments`, the request's `model`
 * picks the one whose `alias` matches, else the `is_default` one; otherwise `cloudC_deployment_id`
 * (or `deployment_id`); otherwise the `model` itself names the deployment, as in Azure's own SDKs.
 * The api-version is the chosen deployment's, else `cloudC_api_version` (or `api_version`), else
 * {@link defaultApiVersion}.
 */
export function chooseDeployment(settings: ProviderSettings, model: unknown): AzureDeploymentChoice {
  const fallbackVersion = settings.cloudC_api_version ?? settings.api_version ?? defaultApiVersion;
  if (settings.deployments?.length) {
    const chosen = settings.deployments.find((item) => item.alias === model) ?? settings.deployments.find((item) => item.is_default);
    if (!chosen) {
      const aliases = settings.deployments.map((item) => item.alias).join(', ');
      throw badRequest(
        `No azure-openai deployment has the alias "${String(model)}" and none is marked is_default. Aliases: ${aliases}.`,
        'model',
        'unknown_deployment',
      );
    }
    return { deployment: chosen.deployment_id, apiVersion: chosen.api_version || fallbackVersion };
  }
  const deployment = settings.cloudC_deployment_id ?? settings.deployment_id ?? (typeof model === 'string' ? model : '');
  return { deployment, apiVersion: fallbackVersion };
}

/**
 * Where the resource's own APIs (files, batches, fine-tuning jobs) lie under the base URL: beside
 * the deployments with the api-version, or on the v1 API under `/v1`.
 * @see https://learn.microsoft.com/azure/ai-foundry/openai/how-to/batch
 */
export function azureResourceApiPath(settings: ProviderSettings, path: string): { path: string; query: string } {
  const version = settings.cloudC_api_version ?? settings.api_version ?? defaultApiVersion;
  if (v1Versions.has(version)) return { path: `v1/${path}`, query: version === 'preview' ? 'api-version=preview' : '' };
  return { path, query: `api-version=${encodeURIComponent(version)}` };
}

/** The first dated api-version with the Responses API (2025-03-01-preview). */
const firstResponsesVersion = '2025-03-01';

const operationPaths: Record<OpenAIOperation, string> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  responses: '/responses',
};

export interface AzureOpenAIRoute {
  url: URL;
  /** The v1 API takes the deployment as the body's `model`. */
  model?: string;
  /** Whether this api-version accepts `stream_options` (added in 2024-09-01-preview). */
  streamOptions: boolean;
}

/**
 * Where a call goes: `{base}/deployments/{deployment}/{operation}?api-version={version}`, or for
 * the v1 API (`api_version` `v1`, `latest` or `preview`) `{base}/v1/{operation}` with the deployment
 * as `model` (and `?api-version=preview` for previews). The Responses API is not under the
 * deployments: `{base}/responses?api-version={version}`, the deployment as `model` there too; a
 * version older than the Responses API (the default among them) sends it to the v1 API instead,
 * which has it without a version, rather than to a path that does not exist.
 * @see https://learn.microsoft.com/azure/ai-foundry/openai/how-to/responses
 */
export function azureOpenAIRoute(baseUrl: string, operation: OpenAIOperation, choice: AzureDeploymentChoice): AzureOpenAIRoute {
  if (v1Versions.has(choice.apiVersion) || (operation === 'responses' && choice.apiVersion.slice(0, 10) < firstResponsesVersion)) {
    const url = new URL(`${baseUrl}/v1${operationPaths[operation]}`);
    if (choice.apiVersion === 'preview') url.searchParams.set('api-version', 'preview');
    return { url, model: choice.deployment || undefined, streamOptions: true };
  }
  if (!choice.deployment)
    throw badRequest('azure-openai needs a deployment: cloudC_deployment_id, deployments, or the model name.', 'model', 'missing_provider_settings');
  if (operation === 'responses') {
    const url = new URL(`${baseUrl}/responses`);
    url.searchParams.set('api-version', choice.apiVersion);
    return { url, model: choice.deployment, streamOptions: false };
  }
  const url = new URL(`${baseUrl}/deployments/${pathSegment(choice.deployment, 'model')}${operationPaths[operation]}`);
  url.searchParams.set('api-version', choice.apiVersion);
  return { url, streamOptions: choice.apiVersion.slice(0, 10) >= '2024-09-01' };
}
