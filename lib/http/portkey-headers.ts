/*
 * Portkey's clients name the gateway's headers `x-portkey-*`. They are read here, at the edge, as the
 * matching `x-gateway-*` header, so nothing past this point knows two spellings; and an answer to a
 * request that used them carries the `x-portkey-*` copies of the headers Portkey's SDK reads.
 */

const portkeyPrefix = 'x-portkey-';

/** Portkey's name (without the prefix) → ours, where they differ by more than the prefix. */
const renamed: Readonly<Record<string, string>> = {
  'aws-access-key-id': 'x-gateway-clouda-access-key-id',
  'aws-secret-access-key': 'x-gateway-clouda-secret-access-key',
  'aws-region': 'x-gateway-clouda-region',
  'aws-session-token': 'x-gateway-clouda-session-token',
  'vertex-project-id': 'x-gateway-cloudb-project-id',
  'vertex-region': 'x-gateway-cloudb-region',
  'vertex-service-account-json': 'x-gateway-cloudb-service-account-json',
  'azure-resource-name': 'x-gateway-cloudc-resource-name',
  'azure-deployment-id': 'x-gateway-cloudc-deployment-id',
  'azure-api-version': 'x-gateway-cloudc-api-version',
  'azure-model-name': 'x-gateway-cloudc-model-name',
  'strict-open-ai-compliance': 'x-gateway-strict-api-compliance',
};

/** Headers whose name is ours with the other prefix. */
const samePastPrefix: ReadonlySet<string> = new Set([
  'api-key',
  'provider',
  'virtual-key',
  'config',
  'custom-host',
  'trace-id',
  'span-id',
  'parent-span-id',
  'span-name',
  'metadata',
  'cache-namespace',
  'cache-force-refresh',
  'request-timeout',
  'forward-headers',
]);

/** The answer headers Portkey's SDK reads, copied under its prefix for a request that used it. */
const echoed = ['trace-id', 'cache-status', 'retry-attempt-count', 'last-used-option-index'] as const;

function gatewayName(portkeyName: string): string | undefined {
  const rest = portkeyName.slice(portkeyPrefix.length);
  return renamed[rest] ?? (samePastPrefix.has(rest) ? `x-gateway-${rest}` : undefined);
}

/**
 * The headers with every `x-portkey-*` one read as its `x-gateway-*` match (which wins when both are
 * sent), and the Portkey headers that have no match (the SDK's runtime and version) left out, so
 * none of them is forwarded to a provider. The same object when there is none, which is the common case.
 */
export function withPortkeyAliases(headers: Record<string, string>): { headers: Record<string, string>; portkey: boolean } {
  let aliased: Record<string, string> | undefined;
  for (const name in headers) {
    if (!name.startsWith(portkeyPrefix)) continue;
    aliased ??= { ...headers };
    delete aliased[name];
    const ours = gatewayName(name);
    if (ours !== undefined && headers[ours] === undefined) aliased[ours] = headers[name]!;
  }
  return aliased ? { headers: aliased, portkey: true } : { headers, portkey: false };
}

/** Adds the `x-portkey-*` copies of the answer's gateway headers that Portkey's SDK reads. */
export function echoPortkeyHeaders(responseHeaders: Record<string, string>): void {
  for (const name of echoed) {
    const value = responseHeaders[`x-gateway-${name}`];
    if (value !== undefined) responseHeaders[`${portkeyPrefix}${name}`] = value;
  }
}
