import { SignatureV4 } from '@smithy/signature-v4';
import { Sha256, type AwsCredentials } from '../../outbound/sigv4';
import { badRequest } from '../../core/errors';
import type { ProviderSettings, RawRequest } from '../types';

/** The SigV4 service name of Bedrock Runtime (its endpoint prefix is `bedrock-runtime`). */
export const signingService = 'bedrock';

/** AWS region names: `us-east-1`, `eu-central-2`, `us-gov-west-1`, `ap-southeast-5`, … */
const regionPattern = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/**
 * The region of a target: `cloudA_region` (checked, because it becomes part of a host name), else
 * one read from a custom host such as `bedrock-runtime.eu-west-1.amazonaws.com` or a VPC endpoint.
 */
export function regionOf(settings: ProviderSettings, host?: string): string {
  const region = settings.cloudA_region?.trim();
  if (region) {
    if (!regionPattern.test(region)) {
      throw badRequest(`cloudA_region must be an AWS region such as "us-east-1"; got "${region.slice(0, 60)}".`, 'cloudA_region', 'invalid_region');
    }
    return region;
  }
  const fromHost = host && /(?:^|\.)([a-z]{2}(?:-[a-z]+)+-\d{1,2})\.(?:vpce\.)?amazonaws\.com(?:\.cn)?$/.exec(host)?.[1];
  if (fromHost) return fromHost;
  throw badRequest(
    'Bedrock needs a region: set cloudA_region in the config or send the x-gateway-cloudA-region header (for example "us-east-1").',
    'cloudA_region',
    'missing_region',
  );
}

/** `https://bedrock-runtime.{region}.amazonaws.com`, the host `custom_host` replaces. */
export function bedrockBaseUrl(settings: ProviderSettings): string {
  return `https://bedrock-runtime.${regionOf(settings)}.amazonaws.com`;
}

/**
 * SigV4 headers (`authorization`, `x-amz-date`, and `x-amz-security-token` for temporary
 * credentials) for a request. Signed: `host`, `content-type` and the `x-amz-*`/`x-amzn-*` headers,
 * so headers the client forwards may vary without breaking the signature. The path is signed the way
 * AWS's own SDKs do for every service but S3: the wire path (a model id as one `%3A`/`%2F`-encoded
 * segment) is URI-encoded once more in the canonical request (`%253A`), which is what Bedrock checks.
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 */
export async function sigV4Headers(
  request: RawRequest,
  credentials: AwsCredentials,
  scope: { region: string; service?: string; date?: Date },
): Promise<Record<string, string>> {
  const { url } = request;
  const headers: Record<string, string> = { host: url.host };
  for (const name in request.headers) {
    const lower = name.toLowerCase();
    if (lower === 'content-type' || lower.startsWith('x-amz-') || lower.startsWith('x-amzn-')) headers[lower] = request.headers[name];
  }
  const query: Record<string, string | string[]> = {};
  for (const [key, value] of url.searchParams) {
    const previous = query[key];
    query[key] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value];
  }
  const signer = new SignatureV4({ credentials, region: scope.region, service: scope.service ?? signingService, sha256: Sha256, applyChecksum: false });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query,
      headers,
      body: request.body,
    },
    { signingDate: scope.date },
  );
  const result: Record<string, string> = { authorization: signed.headers.authorization, 'x-amz-date': signed.headers['x-amz-date'] };
  if (credentials.sessionToken) result['x-amz-security-token'] = credentials.sessionToken;
  return result;
}

/**
 * The headers that authenticate a request to Bedrock: a SigV4 signature when the target has AWS keys
 * (`cloudA_access_key_id` + `cloudA_secret_access_key`, optional `cloudA_session_token`), else a
 * Bedrock API key as `Authorization: Bearer` (Bedrock accepts both).
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html
 */
export async function bedrockAuthHeaders(request: RawRequest, settings: ProviderSettings): Promise<Record<string, string>> {
  const accessKeyId = settings.cloudA_access_key_id?.trim();
  const secretAccessKey = settings.cloudA_secret_access_key?.trim();
  if (accessKeyId || secretAccessKey) {
    if (!accessKeyId || !secretAccessKey) {
      throw badRequest(
        'Bedrock SigV4 needs both cloudA_access_key_id and cloudA_secret_access_key (headers x-gateway-cloudA-access-key-id and x-gateway-cloudA-secret-access-key).',
        accessKeyId ? 'cloudA_secret_access_key' : 'cloudA_access_key_id',
        'missing_credentials',
      );
    }
    const sessionToken = settings.cloudA_session_token?.trim() || undefined;
    return sigV4Headers(request, { accessKeyId, secretAccessKey, sessionToken }, { region: regionOf(settings, request.url.hostname) });
  }
  if (settings.api_key) return { authorization: `Bearer ${settings.api_key}` };
  throw badRequest(
    'Bedrock needs credentials: AWS keys as cloudA_access_key_id + cloudA_secret_access_key (+ cloudA_region, optional cloudA_session_token) in the config or the x-gateway-cloudA-* headers, or a Bedrock API key as Authorization: Bearer <key>.',
    'cloudA_access_key_id',
    'missing_credentials',
  );
}
