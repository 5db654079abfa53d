import { describe, expect, it } from 'vitest';
import { isGatewayFileId, isGatewayFilesRequest, isGatewayUploadId } from '../../lib/files/provider-selection';

const request = (headers: Record<string, string>, fileId?: string) =>
  ({ headers, pathParameters: fileId === undefined ? {} : { fileId } }) as { headers: Record<string, string>; pathParameters: Record<string, string> };

describe('which files requests are the gateway’s', () => {
  it('is the gateway’s when no header selects a provider', () => {
    expect(isGatewayFilesRequest(request({ authorization: 'Bearer sk-x', 'x-gateway-api-key': 'gwk_x' }))).toBe(true);
    expect(isGatewayFilesRequest(request({ 'x-gateway-provider': '  ' }))).toBe(true);
  });

  it.each(['x-gateway-provider', 'x-gateway-virtual-key', 'x-gateway-config', 'x-gateway-custom-host'])('is the provider’s with %s', (header) => {
    expect(isGatewayFilesRequest(request({ [header]: 'openai' }))).toBe(false);
    expect(isGatewayFilesRequest(request({ [header]: 'openai' }, 'file-abc123'))).toBe(false);
  });

  it('is the gateway’s for a gateway file id whatever the headers', () => {
    expect(isGatewayFilesRequest(request({ 'x-gateway-provider': 'openai' }, 'gwf_01jd3abc'))).toBe(true);
    expect(isGatewayFileId('gwf_01jd3abc')).toBe(true);
    expect(isGatewayFileId('file-gwf_1')).toBe(false);
    expect(isGatewayFileId('gwf')).toBe(false);
  });

  it('is the gateway’s for a gateway upload id whatever the headers, and the provider’s for another', () => {
    const upload = (headers: Record<string, string>, uploadId: string) => ({ headers, pathParameters: { uploadId } });
    expect(isGatewayFilesRequest(upload({ 'x-gateway-provider': 'openai' }, 'gwu_01jd3abc'))).toBe(true);
    expect(isGatewayFilesRequest(upload({ 'x-gateway-provider': 'openai' }, 'upload_abc'))).toBe(false);
    expect(isGatewayUploadId('gwu_01jd3abc')).toBe(true);
    expect(isGatewayUploadId('upload_gwu_1')).toBe(false);
  });
});
