/**
 * Where a stored secret may go. A key saved in a config (or a header value saved with a webhook
 * check) travels only to the destination stored with it: its named provider's base URL, the
 * `custom_host` it was saved with, or the URL of the check that holds it. Nothing a request sends,
 * and no edit that keeps the secret without sending it again, can point it somewhere else.
 */
import { destinationFields, secretCredentialFields } from '../providers/provider-fields';
import { badRequest, type GatewayError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import type { ConfigIssue } from './types';

/**
 * The fields that decide where the secrets of one object go: a config target's provider, catalog
 * entry, host and cloud destination settings, or a check's URL.
 */
const destinationKeys = ['provider', 'virtual_key', 'custom_host', ...destinationFields, 'webhookURL', 'logURL'] as const;

/** Whether a config target stores a provider credential of its own. */
export function storesSecret(target: object): boolean {
  const fields = target as Record<string, unknown>;
  return secretCredentialFields.some((field) => typeof fields[field] === 'string' && fields[field] !== '');
}

/**
 * What decides where an object's secrets go, as one comparable string. `inheritedHost` is the
 * `custom_host` a config target inherits from its parents (a target's own value replaces it).
 */
export function destinationOf(node: Record<string, unknown>, inheritedHost: unknown): string {
  return JSON.stringify(destinationKeys.map((key) => (key === 'custom_host' ? (node.custom_host ?? inheritedHost ?? null) : (node[key] ?? null))));
}

/** The `custom_host` that the children of a config node inherit. */
export function hostForChildren(node: Record<string, unknown>, inheritedHost: unknown): unknown {
  return node.custom_host ?? inheritedHost;
}

/**
 * The save-time rule: a target that stores a credential names where it goes — a `provider` (a
 * provider name or an `@slug`), a `virtual_key`, or a `custom_host` (its own or inherited). A target
 * without one would take its destination from each request's headers, and with it the stored key.
 */
export function unboundSecretIssues(config: unknown): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const walk = (node: unknown, path: string, inheritedHost: unknown) => {
    if (!isPlainObject(node)) return;
    const targets = Array.isArray(node.targets) ? node.targets : [];
    const host = hostForChildren(node, inheritedHost);
    if (targets.length === 0 && storesSecret(node) && node.provider === undefined && node.virtual_key === undefined && host === undefined) {
      const stored = secretCredentialFields.filter((field) => typeof node[field] === 'string' && node[field] !== '');
      issues.push({
        param: `${path}.provider`,
        message:
          `is required because this target stores ${stored.join(', ')}: a stored credential is only sent to its provider's base URL or the custom_host saved with it, ` +
          'never to a host a request names. Add "provider" (for example "openai"), or "custom_host" with the base URL the key belongs to',
      });
    }
    targets.forEach((target, index) => walk(target, `${path}.targets[${index}]`, host));
  };
  walk(config, 'config', undefined);
  return issues;
}

/**
 * The 400 of an edit that keeps stored secrets (sent back masked, `maskedPlaceholder`) while
 * changing where they go (`destination`: what decides it in that kind of object): the secret
 * itself must be sent again to move it.
 */
export function movedSecretError(paths: readonly string[], destination: string, maskedPlaceholder: string): GatewayError {
  const one = paths.length === 1;
  return badRequest(
    `${paths.join(', ')} ${one ? 'keeps its' : 'keep their'} stored value ("${maskedPlaceholder}") while the ${destination} ${one ? 'it goes' : 'they go'} to changes. ` +
      'A stored secret only ever goes where it was saved for: send the secret itself again in this PUT to move it, or keep the destination.',
    paths[0]!,
    'credentials_required',
  );
}
