/**
 * How a Responses request continues an earlier response (`previous_response_id`). The gateway
 * always holds the whole conversation (the body's `input` carries it from the first item); when the
 * earlier response was made natively by the provider of this attempt, at the same base URL with the
 * same credential, that provider holds it too, and the call names the provider's own id and sends
 * only the new items, so the provider's state (reasoning included) carries over.
 */
import { sha256Hex } from '../../core/sha256';
import type { NativeResponseLink, ResolvedTarget, ResponsesChain } from '../types';

export type { NativeResponseLink, ResponsesChain };

/**
 * A hash of what a provider's stored response is scoped to: the key and the account scoping sent
 * with it. Two targets with the same fingerprint, provider and base URL see the same stored responses.
 */
export function credentialFingerprint(target: ResolvedTarget): string {
  const { api_key, compat_organization, compat_project, resource_name, deployment_id } = target.settings;
  return sha256Hex(
    JSON.stringify([
      target.provider.name,
      target.baseUrl,
      api_key ?? null,
      compat_organization ?? null,
      compat_project ?? null,
      resource_name ?? null,
      deployment_id ?? null,
    ]),
  ).slice(0, 32);
}

/** The link that names this attempt's own stored conversation, when there is one. */
export function linkFor(chain: ResponsesChain | undefined, target: ResolvedTarget): NativeResponseLink | undefined {
  const link = chain?.link;
  if (!link || link.provider !== target.provider.name || link.baseUrl !== target.baseUrl) return undefined;
  return link.credential === credentialFingerprint(target) ? link : undefined;
}
