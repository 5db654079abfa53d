import type { ProviderSettings } from '../types';

/** A JSON Web Token: three base64url parts, the header starting `{"` (`eyJ`). Entra ID access tokens are JWTs; Azure keys are 32 or 84 plain characters. */
const jwt = /^eyJ[\w-]*\.[\w-]+\.[\w-]*$/;

/**
 * The credential of an Azure target, as Azure wants it. An API key goes in `api-key`; a Microsoft
 * Entra ID access token goes in `Authorization: Bearer`. The key is taken for a token when it looks
 * like one (a JWT), when it is written as `Bearer <token>` in a config, or when the target sets
 * `cloudC_entra_scope` (it is configured for directory authentication; the caller obtains the token
 * for that scope — the gateway does not mint tokens, having no client credentials to do it with).
 * @see https://learn.microsoft.com/azure/ai-services/openai/reference#authentication
 */
export function azureAuthHeaders(settings: ProviderSettings): Record<string, string> {
  const key = settings.api_key?.trim();
  if (!key) return {};
  const explicit = /^Bearer\s+(.+)$/i.exec(key)?.[1];
  if (explicit || settings.cloudC_entra_scope || jwt.test(key)) return { authorization: `Bearer ${explicit ?? key}` };
  return { 'api-key': key };
}

/** Endpoints that take their key (or token) only as `Authorization: Bearer` (Azure ML and serverless endpoints). */
export function bearerAuthHeaders(settings: ProviderSettings): Record<string, string> {
  const key = settings.api_key?.trim();
  if (!key) return {};
  return { authorization: /^Bearer\s/i.test(key) ? key : `Bearer ${key}` };
}
