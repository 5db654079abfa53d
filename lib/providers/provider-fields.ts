/**
 * The provider fields a config target or a catalog entry carries, described once per provider
 * family: which are secrets (sealed in the catalog, masked in answers), which decide where requests
 * go (fixed once a catalog entry stores them), which are other settings, and the `x-gateway-*`
 * headers that may carry them. Everything else that lists provider fields derives its list from here.
 */
const families = {
  /** Key-based providers (the OpenAI family, Anthropic, Cohere, …) and Azure OpenAI's resource. */
  key: {
    secrets: ['api_key'],
    shownSecrets: [],
    destination: ['resource_name'],
    settings: ['deployment_id', 'api_version', 'deployments', 'compat_organization', 'compat_project'],
    headers: {},
  },
  /** AWS Bedrock. */
  cloudA: {
    secrets: ['cloudA_access_key_id', 'cloudA_secret_access_key', 'cloudA_session_token'],
    // An access key id identifies the key; answers show it so people can tell keys apart.
    shownSecrets: ['cloudA_access_key_id'],
    destination: ['cloudA_region'],
    settings: [],
    headers: {
      'x-gateway-clouda-access-key-id': 'cloudA_access_key_id',
      'x-gateway-clouda-secret-access-key': 'cloudA_secret_access_key',
      'x-gateway-clouda-region': 'cloudA_region',
      'x-gateway-clouda-session-token': 'cloudA_session_token',
    },
  },
  /** Google Vertex AI. */
  cloudB: {
    secrets: ['cloudB_service_account_json'],
    shownSecrets: [],
    destination: ['cloudB_project_id', 'cloudB_region'],
    settings: [],
    headers: {
      'x-gateway-cloudb-project-id': 'cloudB_project_id',
      'x-gateway-cloudb-region': 'cloudB_region',
      'x-gateway-cloudb-service-account-json': 'cloudB_service_account_json',
    },
  },
  /** Azure AI Foundry and Azure ML: every field picks hosts, endpoints and deployments together. */
  cloudC: {
    secrets: [],
    shownSecrets: [],
    destination: [
      'cloudC_region',
      'cloudC_deployment_name',
      'cloudC_endpoint_name',
      'cloudC_api_version',
      'cloudC_deployment_type',
      'cloudC_resource_name',
      'cloudC_deployment_id',
      'cloudC_model_name',
      'cloudC_entra_scope',
    ],
    settings: [],
    headers: {
      'x-gateway-cloudc-resource-name': 'cloudC_resource_name',
      'x-gateway-cloudc-deployment-id': 'cloudC_deployment_id',
      'x-gateway-cloudc-api-version': 'cloudC_api_version',
      'x-gateway-cloudc-model-name': 'cloudC_model_name',
    },
  },
} as const;

const { key, cloudA, cloudB, cloudC } = families;

/** Credential fields: sealed together in a catalog entry, never returned by a route. */
export const secretCredentialFields = [...key.secrets, ...cloudA.secrets, ...cloudB.secrets, ...cloudC.secrets] as const;

/**
 * Settings that decide where requests go (the host or the base path), with `custom_host`. A catalog
 * entry's credentials only ever travel to the base URL stored with them, so a request or config
 * cannot override these, and an update that changes them must send the credentials again.
 */
export const destinationFields = [...key.destination, ...cloudA.destination, ...cloudB.destination, ...cloudC.destination] as const;

/** Non-secret provider settings: stored in clear and shown by the routes. */
export const settingFields = [...key.settings, ...cloudA.settings, ...cloudB.settings, ...cloudC.settings, ...destinationFields] as const;

/** Secret fields an answer masks wherever they appear in a config (all but the identifying ones). */
const shown: ReadonlySet<string> = new Set([...cloudA.shownSecrets]);
export const maskedConfigFields: ReadonlySet<string> = new Set(secretCredentialFields.filter((field) => !shown.has(field)));

/** A provider field of a config or catalog entry. */
export type ProviderField = (typeof secretCredentialFields)[number] | (typeof settingFields)[number];

/** The spec's cloud headers (lower-cased) and the config fields they stand for. */
export const cloudHeaderFields: Readonly<Record<string, ProviderField>> = { ...cloudA.headers, ...cloudB.headers, ...cloudC.headers };
