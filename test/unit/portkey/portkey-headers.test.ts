import { describe, expect, it } from 'vitest';
import { echoPortkeyHeaders, withPortkeyAliases } from '../../../lib/http/portkey-headers';

describe("Portkey's headers", () => {
  it('are read as the matching x-gateway headers, and leave the request', () => {
    const { headers, portkey } = withPortkeyAliases({
      'x-portkey-api-key': 'gw-key',
      'x-portkey-provider': '@openai-prod',
      'x-portkey-virtual-key': 'vk',
      'x-portkey-config': 'cfg_abc',
      'x-portkey-custom-host': 'http://127.0.0.1:9/v1',
      'x-portkey-trace-id': 'trace-1',
      'x-portkey-span-id': 's1',
      'x-portkey-parent-span-id': 's0',
      'x-portkey-span-name': 'step',
      'x-portkey-metadata': '{"_user":"u"}',
      'x-portkey-cache-namespace': 'ns',
      'x-portkey-cache-force-refresh': 'true',
      'x-portkey-request-timeout': '5000',
      'x-portkey-forward-headers': 'x-a',
      'x-portkey-aws-access-key-id': 'AKIA0',
      'x-portkey-aws-secret-access-key': 'secret',
      'x-portkey-aws-region': 'us-east-1',
      'x-portkey-aws-session-token': 'token',
      'x-portkey-vertex-project-id': 'project',
      'x-portkey-vertex-region': 'us-central1',
      'x-portkey-vertex-service-account-json': '{}',
      'x-portkey-azure-resource-name': 'res',
      'x-portkey-azure-deployment-id': 'dep',
      'x-portkey-azure-api-version': '2024-10-21',
      'x-portkey-azure-model-name': 'gpt-4o',
      'x-portkey-strict-open-ai-compliance': 'false',
      'x-portkey-runtime': 'node',
      'content-type': 'application/json',
    });
    expect(portkey).toBe(true);
    expect(headers).toEqual({
      'x-gateway-api-key': 'gw-key',
      'x-gateway-provider': '@openai-prod',
      'x-gateway-virtual-key': 'vk',
      'x-gateway-config': 'cfg_abc',
      'x-gateway-custom-host': 'http://127.0.0.1:9/v1',
      'x-gateway-trace-id': 'trace-1',
      'x-gateway-span-id': 's1',
      'x-gateway-parent-span-id': 's0',
      'x-gateway-span-name': 'step',
      'x-gateway-metadata': '{"_user":"u"}',
      'x-gateway-cache-namespace': 'ns',
      'x-gateway-cache-force-refresh': 'true',
      'x-gateway-request-timeout': '5000',
      'x-gateway-forward-headers': 'x-a',
      'x-gateway-clouda-access-key-id': 'AKIA0',
      'x-gateway-clouda-secret-access-key': 'secret',
      'x-gateway-clouda-region': 'us-east-1',
      'x-gateway-clouda-session-token': 'token',
      'x-gateway-cloudb-project-id': 'project',
      'x-gateway-cloudb-region': 'us-central1',
      'x-gateway-cloudb-service-account-json': '{}',
      'x-gateway-cloudc-resource-name': 'res',
      'x-gateway-cloudc-deployment-id': 'dep',
      'x-gateway-cloudc-api-version': '2024-10-21',
      'x-gateway-cloudc-model-name': 'gpt-4o',
      'x-gateway-strict-api-compliance': 'false',
      'content-type': 'application/json',
    });
  });

  it('lose to the x-gateway header when both are sent', () => {
    const { headers } = withPortkeyAliases({ 'x-portkey-config': 'cfg_theirs', 'x-gateway-config': 'cfg_ours' });
    expect(headers).toEqual({ 'x-gateway-config': 'cfg_ours' });
  });

  it('leave a request without them untouched, as the same object', () => {
    const sent = { 'x-gateway-api-key': 'k', authorization: 'Bearer sk' };
    const { headers, portkey } = withPortkeyAliases(sent);
    expect(portkey).toBe(false);
    expect(headers).toBe(sent);
  });

  it("copy the answer headers Portkey's SDK reads", () => {
    const answer: Record<string, string> = {
      'x-gateway-trace-id': 't',
      'x-gateway-cache-status': 'HIT',
      'x-gateway-retry-attempt-count': '1',
      'x-gateway-last-used-option-index': '0',
      'x-gateway-provider': 'openai',
    };
    echoPortkeyHeaders(answer);
    expect(answer).toMatchObject({
      'x-portkey-trace-id': 't',
      'x-portkey-cache-status': 'HIT',
      'x-portkey-retry-attempt-count': '1',
      'x-portkey-last-used-option-index': '0',
    });
    expect(answer['x-portkey-provider']).toBeUndefined();
  });
});
