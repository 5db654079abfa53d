import type { GatewayRequest } from '../http/types';

/** The headers that send a request to a provider; without any of them a files request is the gateway's own. */
const providerSelectingHeaders = ['x-gateway-provider', 'x-gateway-virtual-key', 'x-gateway-config', 'x-gateway-custom-host'];

/** Ids of the gateway's files: a prefix no provider uses (OpenAI's start `file-`), so an id alone says whose it is. */
export const gatewayFileIdPrefix = 'gwf';

export function isGatewayFileId(id: string): boolean {
  return id.startsWith(`${gatewayFileIdPrefix}_`);
}

/** Ids of the gateway's uploads and their parts: prefixes of their own, as for files (OpenAI's start `upload_` and `part_`). */
export const gatewayUploadIdPrefix = 'gwu';
export const gatewayUploadPartIdPrefix = 'gwp';

export function isGatewayUploadId(id: string): boolean {
  return id.startsWith(`${gatewayUploadIdPrefix}_`);
}

/**
 * Whether a request to a `/v1/files` or `/v1/uploads` route is for the gateway's Files API rather than a provider's.
 * A gateway file or upload id decides it whatever the headers say: a client that sends its provider headers
 * on every call (the OpenAI client's default headers) still reaches the gateway's file. Otherwise a
 * request that selects no provider is the gateway's, and one that selects a provider is passed
 * through as it always was.
 */
export function isGatewayFilesRequest(request: Pick<GatewayRequest, 'headers' | 'pathParameters'>): boolean {
  const { fileId, uploadId } = request.pathParameters;
  if (fileId !== undefined && isGatewayFileId(fileId)) return true;
  if (uploadId !== undefined && isGatewayUploadId(uploadId)) return true;
  return !selectsProvider(request.headers);
}

/** Whether the headers send a request to a provider (its own API, passed through). */
export function selectsProvider(headers: Record<string, string>): boolean {
  return providerSelectingHeaders.some((name) => headers[name]?.trim());
}
