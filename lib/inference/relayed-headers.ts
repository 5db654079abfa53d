/**
 * Response headers of a provider that a unified route relays: request ids, rate-limit state
 * (`x-ratelimit-*`, `anthropic-ratelimit-*`, …) and retry hints. Everything else describes a body
 * the gateway may have re-framed.
 */
export function relayedResponseHeaders(upstream: Record<string, string | string[] | undefined>, provider: string): Record<string, string> {
  const headers: Record<string, string> = { 'x-gateway-provider': provider };
  for (const name in upstream) {
    if (
      name === 'x-request-id' ||
      name === 'request-id' ||
      name === 'x-amzn-requestid' ||
      name === 'retry-after' ||
      name === 'retry-after-ms' ||
      name.includes('ratelimit-') ||
      name.startsWith('openai-')
    ) {
      const value = upstream[name];
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
  }
  return headers;
}
