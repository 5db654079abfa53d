/*
 * The semantic cache's embedding call: a provider attempt of the inference core, so it lives with
 * the core and the cache library itself never calls a provider (the cache step hands its result on).
 */
import type { TokenUsage } from '../core/usage';
import { attemptProvider } from './provider-attempt';
import { AttemptTimeout } from './provider-body';
import { resolveTarget } from './target';
import type { ProviderCatalog } from '../catalog/providers';
import type { WorkspaceCacheSettings } from '../store/workspaces';

/** An embedding slower than this is a semantic miss: the lookup must never cost more than it saves. */
export const embeddingTimeoutMs = 2_000;

export interface CacheEmbedding {
  vector: number[];
  usage?: TokenUsage;
  /** The provider (by its gateway name) that embedded it: its price list prices `usage`. */
  provider: string;
}

/**
 * The embedding of `text` by the workspace's embedding provider (a catalog entry) and model,
 * within `embeddingTimeoutMs`; undefined when it fails in any way (no such catalog entry any
 * more, an error answer, a timeout, an answer without a vector), which the cache treats as a
 * semantic miss, never as a failed request. The reason goes to the process log.
 */
export async function embedForCache(
  catalog: ProviderCatalog,
  workspaceId: string,
  settings: WorkspaceCacheSettings,
  text: string,
): Promise<CacheEmbedding | undefined> {
  try {
    const leaf = { path: 'cache.embedding_provider', config: { provider: settings.embedding_provider }, settings: {}, children: [] };
    const target = await resolveTarget(catalog, leaf, {}, workspaceId, true);
    const timeout = new AttemptTimeout(target.provider.name, embeddingTimeoutMs);
    let usage: TokenUsage | undefined;
    try {
      const outcome = await attemptProvider(
        {
          operation: 'embeddings',
          body: { model: settings.embedding_model, input: text },
          stream: false,
          target,
          forwardHeaders: {},
          requestHeaders: {},
          strictApiCompliance: true,
        },
        timeout,
        { onUsage: (reported) => (usage = reported), onStreamError() {} },
      );
      if (!outcome.ok) throw outcome.error;
      const vector = firstEmbedding(outcome.body);
      if (!vector) throw new Error('the answer holds no embedding vector');
      return { vector, usage, provider: target.provider.name };
    } finally {
      timeout.stop();
    }
  } catch (error) {
    console.warn(
      `The semantic cache could not embed a message with ${settings.embedding_provider} (${settings.embedding_model}); treating it as a semantic miss: ${(error as Error).message}`,
    );
    return undefined;
  }
}

/** `data[0].embedding` of an OpenAI-format embeddings answer, when it is a list of finite numbers. */
function firstEmbedding(body: unknown): number[] | undefined {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : undefined;
  if (text === undefined) return undefined;
  const vector = (JSON.parse(text) as { data?: Array<{ embedding?: unknown }> }).data?.[0]?.embedding;
  return Array.isArray(vector) && vector.length > 0 && vector.every((value) => typeof value === 'number' && Number.isFinite(value)) ? vector : undefined;
}
