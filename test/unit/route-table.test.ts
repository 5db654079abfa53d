import { describe, expect, it } from 'vitest';
import { hasMalformedEscape, RouteTable } from '../../lib/local/lambda/route-table';
import type { ServerlessRoute } from '../../lib/local/template/serverless-config';

const route = (method: ServerlessRoute['method'], path: string, functionName: string): ServerlessRoute => ({
  method,
  path,
  functionName,
  streaming: false,
  integrationTimeoutMs: 29_000,
});

const table = new RouteTable([
  route('POST', '/v1/chat/completions', 'chat'),
  route('ANY', '/v1/{proxy+}', 'passthrough'),
  route('GET', '/v1/api-keys', 'keys'),
  route('POST', '/v1/api-keys', 'keys'),
  route('DELETE', '/v1/api-keys/{keyId}', 'keys'),
]);

describe('RouteTable (API Gateway precedence)', () => {
  it('prefers literal resources over the greedy proxy', () => {
    expect(table.match('POST', '/v1/chat/completions')?.route?.functionName).toBe('chat');
    expect(table.match('GET', '/v1/api-keys')?.route?.functionName).toBe('keys');
  });

  it('binds path parameters, decoded', () => {
    expect(table.match('DELETE', '/v1/api-keys/key%5F1')).toMatchObject({ resource: '/v1/api-keys/{keyId}', pathParameters: { keyId: 'key_1' } });
  });

  it('sends everything else under /v1 to the proxy resource with the rest of the path', () => {
    expect(table.match('GET', '/v1/models/gpt-4o')).toMatchObject({
      resource: '/v1/{proxy+}',
      route: { functionName: 'passthrough' },
      pathParameters: { proxy: 'models/gpt-4o' },
    });
    expect(table.match('POST', '/v1/api-keys/k/extra')?.route?.functionName).toBe('passthrough');
  });

  it('does not fall through to the proxy when a literal resource lacks the method', () => {
    const match = table.match('GET', '/v1/chat/completions');
    expect(match?.resource).toBe('/v1/chat/completions');
    expect(match?.route).toBeUndefined();
  });

  it('matches nothing outside the declared tree', () => {
    expect(table.match('GET', '/health')).toBeUndefined();
    expect(table.match('GET', '/v1')?.route).toBeUndefined();
  });
});

describe('hasMalformedEscape', () => {
  it('finds escapes that do not decode, and only those', () => {
    for (const path of ['/v1/logs/%', '/v1/logs/%zz', '/v1/%2', '/v1/%E0%A4%A', '/v1/%ff', '/v1/%c3%28']) expect(hasMalformedEscape(path), path).toBe(true);
    for (const path of ['/v1/logs/%25zz', '/v1/chat/completions', '/v1/x%2Fy', '/v1/caf%C3%A9', '/v1/%2e%2e'])
      expect(hasMalformedEscape(path), path).toBe(false);
  });
});
