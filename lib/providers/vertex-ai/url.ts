import { badRequest } from '../../core/errors';
import type { ProviderSettings } from '../types';

/** The default base URL, as documented: region and project come from the target's settings. */
export const vertexBaseUrlTemplate = 'https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}';

// Regions and project ids go into the host and path, so only their documented characters pass.
const regionPattern = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const projectPattern = /^([a-z0-9.-]+:)?[a-z0-9-]+$/;

/**
 * `https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}`, or the
 * global endpoint `https://aiplatform.googleapis.com/…/locations/global`. The project is
 * `cloudB_project_id`, else the service account's `project_id`.
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/learn/locations
 */
export function vertexBaseUrl(settings: ProviderSettings): string {
  const region = settings.cloudB_region;
  if (!region)
    throw badRequest(
      'vertex-ai needs a region: cloudB_region in the config, or the x-gateway-cloudB-region header (e.g. us-central1 or global).',
      'cloudB_region',
      'missing_required_parameter',
    );
  if (!regionPattern.test(region))
    throw badRequest(`cloudB_region "${region.slice(0, 64)}" is not a Vertex AI region name (e.g. us-central1 or global).`, 'cloudB_region', 'invalid_region');
  const accountProject = settings.cloudB_service_account_json?.project_id;
  const project = settings.cloudB_project_id ?? (typeof accountProject === 'string' ? accountProject : undefined);
  if (!project) {
    throw badRequest(
      'vertex-ai needs a project: cloudB_project_id in the config, the x-gateway-cloudB-project-id header, or a service account with project_id.',
      'cloudB_project_id',
      'missing_required_parameter',
    );
  }
  if (!projectPattern.test(project))
    throw badRequest(`cloudB_project_id "${project.slice(0, 64)}" is not a Google Cloud project id.`, 'cloudB_project_id', 'invalid_project');
  const host = region === 'global' ? 'aiplatform.googleapis.com' : `${region}-aiplatform.googleapis.com`;
  return `https://${host}/v1/projects/${project}/locations/${region}`;
}

export type Publisher = 'google' | 'anthropic';

/**
 * Which publisher serves a model: Claude models (`claude-…`) are Anthropic's, everything else
 * Google's. A `google.` or `anthropic.` prefix names the publisher explicitly and is removed.
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude
 */
export function publisherOf(model: string): { publisher: Publisher; model: string } {
  const prefixed = /^(google|anthropic)\.(.+)$/.exec(model);
  if (prefixed) return { publisher: prefixed[1] as Publisher, model: prefixed[2] };
  return { publisher: model.startsWith('claude') ? 'anthropic' : 'google', model };
}
