import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { env } from '../support/gateway-client';
import { repoRoot } from '../support/repo-root';

describe('GET /v1/openapi.json', () => {
  it('answers the committed document to anyone, with no key', async () => {
    const response = await fetch(`${env().gatewayUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('x-gateway-trace-id')).toBeTruthy();
    const served = (await response.json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    expect(served).toEqual(JSON.parse(readFileSync(path.join(repoRoot, 'docs', 'openapi.json'), 'utf8')));
    expect(served.paths['/v1/chat/completions'].post.operationId).toBe('createChatCompletion');
  });

  it('answers with a key too, whatever the key', async () => {
    const response = await fetch(`${env().gatewayUrl}/openapi.json`, { headers: { 'x-gateway-api-key': 'gwk_not_a_key' } });
    expect(response.status).toBe(200);
  });

  it('takes GET only', async () => {
    const response = await fetch(`${env().gatewayUrl}/openapi.json`, { method: 'POST' });
    // API Gateway answers a method a resource lacks as an unknown route (MissingRouteGatewayResponse).
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('route_not_found');
  });
});
