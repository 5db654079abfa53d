import { badRequest, GatewayError } from '../../core/errors';
import type { ResolvedTarget } from '../types';
import { serviceAccountToken } from './token';

/**
 * `Authorization: Bearer <OAuth access token>`: minted from the target's service account key when
 * it has one, else the access token the client sent (`Authorization: Bearer`, i.e. `api_key`) as it
 * is. The service account wins because OpenAI clients always send an Authorization header.
 * @see https://cloud.google.com/vertex-ai/docs/authentication#rest
 */
export async function vertexAuthHeaders(target: ResolvedTarget, requestHeaders: Record<string, string>): Promise<Record<string, string>> {
  const provider = target.provider.name;
  const requestType = requestTypeHeader(requestHeaders);
  const account = target.settings.cloudB_service_account_json;
  let token: string;
  if (account) token = await serviceAccountToken(account, provider);
  else if (target.settings.api_key) token = target.settings.api_key;
  else {
    throw new GatewayError(
      401,
      `${provider} needs credentials: cloudB_service_account_json in the config or provider catalog, or an OAuth access token as Authorization: Bearer <token>.`,
      {
        code: 'missing_credentials',
        provider,
      },
    );
  }
  return { authorization: `Bearer ${token}`, ...requestType };
}

/**
 * `x-cloudB-llm-request-type` → Vertex's `X-Vertex-AI-LLM-Request-Type`: `dedicated` uses only
 * Provisioned Throughput, `shared` only pay-as-you-go.
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/use-provisioned-throughput
 */
function requestTypeHeader(requestHeaders: Record<string, string>): Record<string, string> {
  const value = requestHeaders['x-cloudb-llm-request-type']?.trim().toLowerCase();
  if (!value) return {};
  if (value !== 'dedicated' && value !== 'shared')
    throw badRequest('x-cloudB-llm-request-type must be "dedicated" or "shared".', 'x-cloudB-llm-request-type', 'invalid_header');
  return { 'x-vertex-ai-llm-request-type': value };
}
