import type { GatewayResponse } from './types';

export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): GatewayResponse {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}
