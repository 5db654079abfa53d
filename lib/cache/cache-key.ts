import { canonicalJson } from '../core/canonical-json';
import { sha256Hex as sha256 } from '../core/sha256';
import { contentText, lastUserMessageIndex } from '../providers/openai-format/message-text';
import { secretCredentialFields, settingFields } from '../providers/provider-fields';
import type { JsonObject, Operation, ResolvedTarget } from '../providers/types';

/** Body fields that change how an answer is delivered or attributed, not the answer itself. */
const deliveryFields = new Set(['stream', 'stream_options', 'user']);

/**
 * The partition a namespace names: `x-gateway-cache-namespace` alone decides it (the spec: the
 * namespace ignores metadata and other headers). Hashed, so the stored key says nothing of it.
 */
export function namespacePartition(namespace: string): string {
  return `ns-${sha256(namespace).slice(0, 32)}`;
}

/**
 * The partition of a request without a namespace: its metadata and the identity of the provider
 * credential it is sent with (a SHA-256 of the secret fields, never the secrets), so callers with
 * different metadata or different provider keys never share an answer.
 */
export function defaultPartition(metadata: Record<string, unknown>, target: ResolvedTarget): string {
  return `md-${sha256(canonicalJson({ metadata, credential: credentialIdentity(target.settings) })).slice(0, 32)}`;
}

/**
 * The credentials' identities already computed, by their values: a client sends the same key on
 * every request. The values are in this process's memory anyway (the request holds them); only
 * their hash ever leaves it.
 */
const credentialIdentities = new Map<string, string>();
const maxCredentialIdentities = 1000;

function credentialIdentity(settings: ResolvedTarget['settings']): string {
  const values = secretCredentialFields.map((field) => {
    const value = settings[field as keyof typeof settings];
    return value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  });
  const lookup = values.join('\u0000');
  let identity = credentialIdentities.get(lookup);
  if (identity === undefined) {
    identity = sha256(JSON.stringify(values));
    if (credentialIdentities.size >= maxCredentialIdentities) credentialIdentities.delete(credentialIdentities.keys().next().value!);
    credentialIdentities.set(lookup, identity);
  }
  return identity;
}

/**
 * The key of one request as the provider would get it: the operation, the provider, its base URL
 * and non-secret settings (a deployment, an API version), the body after `override_params`, in
 * canonical form (property order does not matter) and without the fields of `deliveryFields`, and
 * what else shapes the answer (forwarded headers, `strict_api_compliance`).
 */
export function requestKey(operation: Operation, target: ResolvedTarget, body: JsonObject, shaping: AnswerShaping, clientBytes?: Buffer): string {
  return sha256(keyMaterial(operation, target, bodyHash(body, clientBytes), shaping));
}

/**
 * The canonical hash of the body the provider gets, remembered by the SHA-256 of the client's
 * bytes when the body is exactly what the client sent: a client repeats its requests byte for
 * byte, and a native hash of the bytes costs a fraction of putting the body in canonical form.
 * Only hashes are kept, never a body.
 */
const bodyHashes = new Map<string, string>();
const maxBodyHashes = 1000;

function bodyHash(body: JsonObject, clientBytes: Buffer | undefined): string {
  if (!clientBytes) return canonicalBodyHash(body);
  const bytesHash = sha256(clientBytes);
  let hash = bodyHashes.get(bytesHash);
  if (hash === undefined) {
    hash = canonicalBodyHash(body);
    if (bodyHashes.size >= maxBodyHashes) bodyHashes.delete(bodyHashes.keys().next().value!);
    bodyHashes.set(bytesHash, hash);
  }
  return hash;
}

/** The body without the fields of `deliveryFields`, in canonical form, hashed. */
function canonicalBodyHash(body: JsonObject): string {
  const sent: JsonObject = {};
  for (const name in body) if (!deliveryFields.has(name)) sent[name] = body[name];
  return sha256(canonicalJson(sent));
}

/** What shapes a provider's answer besides the body: forwarded client headers, and whether it keeps to the OpenAI schema. */
export interface AnswerShaping {
  forwardHeaders: Record<string, string>;
  strictApiCompliance: boolean;
}

/** What the semantic cache compares of a chat request: its last user message by meaning, the rest exactly. */
export interface SemanticQuery {
  /** The text of the last user message: the one part that is embedded. */
  text: string;
  /**
   * Everything else, hashed: the partition, the embedding model, and the request's key material
   * with that message's content left out, so the system prompt, every other turn (before and
   * after it), the model and every parameter must match for two requests to share an answer.
   */
  scope: string;
}

/**
 * The semantic query of a chat request, or undefined when it has none to embed: no user message,
 * or a last user message with more than text in it (an image is not compared by a text embedding).
 */
export function semanticQuery(
  target: ResolvedTarget,
  body: JsonObject,
  shaping: AnswerShaping,
  partition: string,
  embedding: { provider: string; model: string },
): SemanticQuery | undefined {
  const last = lastUserMessageIndex(body.messages);
  if (last < 0) return undefined;
  const messages = body.messages as JsonObject[];
  const message = messages[last]!;
  const text = contentText(message.content, { textOnly: true });
  if (!text?.trim()) return undefined;
  const others = messages.slice();
  others[last] = { ...message, content: null };
  const material = keyMaterial('chat', target, canonicalBodyHash({ ...body, messages: others }), shaping);
  return { text, scope: `sc-${sha256(canonicalJson({ material, partition, embedding })).slice(0, 32)}` };
}

/**
 * Everything of a request's key but its partition, as one string: values at fixed positions (the
 * settings in `settingFields` order, headers sorted by name), so it is as deterministic as a
 * canonical form without walking an object tree on every request.
 */
function keyMaterial(operation: Operation, target: ResolvedTarget, bodyHash: string, shaping: AnswerShaping): string {
  // Only what changes where the request goes and what the provider does with it: a target's other
  // config fields (retry, hooks, the cache's own max_age) must not split the cache.
  const all = target.settings as Record<string, unknown>;
  const settings = settingFields.map((field) => {
    const value = all[field];
    // A structured value is marked apart, so it never reads as a string of the same text.
    return value === undefined ? null : typeof value === 'string' ? value : { json: canonicalJson(value) };
  });
  // Forwarded headers may hold a client's secret: like the rest, they leave this process only hashed.
  const headers = Object.keys(shaping.forwardHeaders)
    .sort()
    .map((name) => [name, shaping.forwardHeaders[name]]);
  return JSON.stringify([operation, target.provider.name, target.baseUrl, settings, bodyHash, headers, shaping.strictApiCompliance]);
}
