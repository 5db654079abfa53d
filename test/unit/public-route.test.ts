/**
 * A route defined as `public` is answered without a key; its neighbours in the same function still
 * need one, and a public route that reads the caller fails instead of answering for somebody.
 */
import { describe, expect, it, vi } from 'vitest';
import { controlRoutes, defineRoute } from '../../lib/http/define-route';
import { runRoute } from '../../lib/http/pipeline';
import type { GatewayRequest } from '../../lib/http/types';

const routes = controlRoutes(
  defineRoute({ method: 'GET', path: '/v1/open', role: 'public', handler: async () => ({ open: true }) }),
  defineRoute({ method: 'GET', path: '/v1/leaky', role: 'public', handler: async (_input, { auth }) => ({ workspace: auth.workspaceId }) }),
  defineRoute({ method: 'GET', path: '/v1/closed', role: 'member', handler: async () => ({ open: false }) }),
);

function request(resource: string, headers: Record<string, string> = {}): GatewayRequest {
  return {
    method: 'GET',
    path: resource,
    resource,
    rawQuery: '',
    query: {},
    headers,
    pathParameters: {},
    body: Buffer.alloc(0),
    requestId: 'req',
    receivedAt: 0,
  };
}

async function call(resource: string, headers?: Record<string, string>) {
  const response = await runRoute(request(resource, headers), routes, () => {});
  return { status: response.status, body: JSON.parse(String(response.body)), traceId: response.headers['x-gateway-trace-id'] };
}

describe('public routes', () => {
  it('answer without a key, with a trace id like any other answer', async () => {
    const answer = await call('/v1/open');
    expect(answer).toMatchObject({ status: 200, body: { open: true } });
    expect(answer.traceId).toBeTruthy();
  });

  it('ignore a key that would not pass, since none is read', async () => {
    expect(await call('/v1/open', { 'x-gateway-api-key': 'not-a-key' })).toMatchObject({ status: 200 });
  });

  it('leave the other routes of their function keyed', async () => {
    expect(await call('/v1/closed')).toMatchObject({ status: 401 });
  });

  it('fail rather than answer when they read the caller', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await call('/v1/leaky')).toMatchObject({ status: 500 });
      expect(logged.mock.calls.flat().join(' ')).toContain('A public route read the caller');
    } finally {
      logged.mockRestore();
    }
  });
});
