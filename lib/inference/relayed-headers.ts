/**
 * Response headers of a provider that a unified route relays: request ids, rate-limit state and
 * retry hints. Everything else describes a body the gateway may have re-framed.
 */
export function relayedResponseHeaders(upstream: Record<string, string | string[] | undefined>, provider: string): Record<string, string> {
  const headers: Record<string, string> = { 'x-gateway-provider': provider };
  for (const name in upstream) {
    if (
      name === 'x-request-id' ||
      name === 'request-id' ||
      name === 'retry-after' ||
      name === 'retry-after-ms' ||
      name.startsWith('x-ratelimit-') ||
      name.startsWith('openai-')
    ) {
      const value = upstream[name];
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return headers;
}
