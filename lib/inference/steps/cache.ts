import type { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { defaultPartition, namespacePartition, requestKey, semanticQuery, type AnswerShaping, type SemanticQuery } from '../../cache/cache-key';
import { embedForCache } from '../cache-embedding';
import { defaultMaxAgeSeconds, type AnswerToKeep, type CacheSlot } from '../../cache/response-cache';
import type { AnswerCache } from '../../cache/semantic-cache';
import { isFinishedResponse } from '../../cache/responses-capture';
import { replayMessageAsSse } from '../../cache/messages-replay';
import { replayText } from '../../cache/replay-text';
import { replayResponseAsSse } from '../../cache/responses-replay';
import { replayAsSse } from '../../cache/sse-replay';
import { captureStream, type CapturedOperation } from '../../cache/stream-capture';
import { isReadable } from '../../core/readable';
import type { TokenUsage } from '../../core/usage';
import type { JsonObject, ResolvedTarget } from '../../providers/types';
import type { AttemptOutcome } from '../../routing/attempt-outcome';
import type { WorkspaceCacheSettings } from '../../store/workspaces';
import type { UnifiedRequest } from '../inference-request';
import type { CacheStatus, InferenceContext, TargetStep } from '../context';
import { setByStep } from '../steps';
import { attemptBody, attemptShaping } from '../attempt';

/**
 * `cache`: with a `cache` setting on the target (its own or inherited), answers a request that was
 * answered before from the stored answer, without calling the provider; otherwise calls it and
 * keeps a complete, successful answer for the next identical request. The lookup is keyed on the
 * request exactly as this target's provider would get it, so a fallback to another target looks up
 * that target's answer. In semantic mode, a chat request the exact cache misses is looked up by
 * the meaning of its last user message among requests that match it in everything else.
 */
export const cacheStep: TargetStep = {
  name: 'cache',
  async run(attempt, next) {
    const settings = attempt.leaf.settings.cache;
    const { inference } = attempt;
    const request = inference.request;
    if (!settings || request.kind !== 'unified') return next();
    const target = setByStep(attempt.target, 'target');
    const body = attemptBody(attempt);
    const shaping = attemptShaping(attempt, request);
    const { namespace, forceRefresh } = request.options.cache;
    const answers = inference.stores.cache;
    const slot: CacheSlot = {
      workspaceId: request.caller.workspaceId,
      partition: namespace !== undefined ? namespacePartition(namespace) : defaultPartition(request.metadata, target),
      key: requestKey(request.operation, target, body, shaping, body === request.body ? request.clientBytes : undefined),
    };
    const serve = (status: CacheStatus, stored: { body: Buffer; usage?: TokenUsage }) => {
      inference.cacheStatus = status;
      inference.recorder.sentModel(body.model);
      inference.recorder.servedFromCache(stored.usage);
      return answerFromCache(request, stored.body, target.provider.name);
    };

    if (!forceRefresh) {
      const stored = await answers.exact.find(slot);
      if (stored) return serve('HIT', stored);
    }
    const semantic =
      settings.mode === 'semantic' && request.operation === 'chat' ? await semanticLookup(answers, request, target, body, shaping, slot.partition) : undefined;
    let vector: Promise<number[] | undefined> | undefined;
    if (semantic) {
      vector = embed(inference, semantic);
      if (!forceRefresh) {
        const found = await vector;
        const match = found && (await answers.semantic.find(slot.workspaceId, semantic.query.scope, found, semantic.settings.similarity_threshold));
        if (match) return serve('SEMANTIC HIT', match.entry);
      }
    }
    inference.cacheStatus = forceRefresh ? 'REFRESH' : semantic ? 'SEMANTIC MISS' : 'MISS';
    const outcome = await next();
    if (outcome.ok && outcome.status >= 200 && outcome.status < 300) {
      const expiresAt = Date.now() + (settings.max_age ?? defaultMaxAgeSeconds) * 1000;
      keepAnswer(inference, outcome, async (answer) => {
        // An answer the output hooks flagged or withheld is never kept.
        if (attempt.answerChecked && !(await attempt.answerChecked)) return;
        const found = await vector;
        if (semantic && found) await answers.semantic.remember(slot, answer, expiresAt, { scope: semantic.query.scope, vector: found });
        else await answers.exact.remember(slot, answer, expiresAt);
      });
    }
    return outcome;
  },
};

interface SemanticLookup {
  settings: WorkspaceCacheSettings;
  query: SemanticQuery;
}

/**
 * What a semantic lookup needs, or undefined when the request has none: the workspace has no
 * embedding settings (semantic mode then behaves as simple), or the request no text to embed.
 */
async function semanticLookup(
  answers: AnswerCache,
  request: UnifiedRequest,
  target: ResolvedTarget,
  body: JsonObject,
  shaping: AnswerShaping,
  partition: string,
): Promise<SemanticLookup | undefined> {
  const settings = await answers.semantic.settingsOf(request.caller.workspaceId);
  if (!settings) return undefined;
  const query = semanticQuery(target, body, shaping, partition, { provider: settings.embedding_provider, model: settings.embedding_model });
  return query && { settings, query };
}

/** The embedding of the last user message, its tokens reported as the request's spend; undefined when it failed. */
function embed(inference: InferenceContext, semantic: SemanticLookup): Promise<number[] | undefined> {
  // By text: a retry or a fallback to another target embeds nothing twice.
  const embeddings = (inference.cacheEmbeddings ??= new Map());
  const key = `${semantic.settings.embedding_provider}\n${semantic.settings.embedding_model}\n${semantic.query.text}`;
  let vector = embeddings.get(key);
  if (!vector) {
    vector = embedForCache(inference.stores.catalog, inference.request.caller.workspaceId, semantic.settings, semantic.query.text).then((embedding) => {
      if (embedding?.usage) inference.recorder.embeddedForCache(embedding.usage, { provider: embedding.provider, model: semantic.settings.embedding_model });
      return embedding?.vector;
    });
    embeddings.set(key, vector);
    // On a forced refresh the embedding runs beside the provider call: the log line waits for its
    // tokens (at most the embedding's 2 s timeout) rather than missing them.
    inference.waitUntil(inference.recorder.waitFor(vector));
  }
  return vector;
}

/** The stored answer as this request wants it: the JSON body, or replayed as a stream. */
function answerFromCache(request: UnifiedRequest, stored: Buffer, provider: string): AttemptOutcome {
  const headers = { 'x-gateway-provider': provider };
  if (!request.stream || request.operation === 'embeddings')
    return { ok: true, status: 200, headers: { ...headers, 'content-type': 'application/json' }, body: stored };
  // Responses and Messages streams have no usage chunk to ask for: their events carry the usage.
  const includeUsage =
    request.operation !== 'responses' &&
    request.operation !== 'messages' &&
    (request.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  return {
    ok: true,
    status: 200,
    headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    body: replayOf(stored, request.operation, includeUsage),
  };
}

/**
 * Replays of small answers, kept beside the stored body they were made from (the first level
 * holds that body while the entry is hot, and the replay goes with it): a streamed hit is then one
 * ready buffer, with no JSON parse or event building. A long answer is replayed as it is read.
 */
const replays = new WeakMap<Buffer, { plain?: Buffer; withUsage?: Buffer }>();
const maxKeptReplayBytes = 64 * 1024;

function replayOf(stored: Buffer, operation: CapturedOperation, includeUsage: boolean): Buffer | Readable {
  const answer = () => JSON.parse(stored.toString('utf8'));
  if (stored.length > maxKeptReplayBytes) {
    if (operation === 'responses') return replayResponseAsSse(answer());
    return operation === 'messages' ? replayMessageAsSse(answer()) : replayAsSse(answer(), operation, { includeUsage });
  }
  let kept = replays.get(stored);
  if (!kept) replays.set(stored, (kept = {}));
  const variant = includeUsage ? 'withUsage' : 'plain';
  return (kept[variant] ??= Buffer.from(replayText(answer(), operation, includeUsage)));
}

/**
 * Stores the answer once it is complete: a whole body at once, a stream when it has ended cleanly
 * (an error event or a broken stream is never kept). A response (Responses API) is kept only when
 * finished: a queued, running or failed one is no answer to give again. The write happens after
 * the client has its answer, through `waitUntil`.
 */
function keepAnswer(inference: InferenceContext, outcome: Extract<AttemptOutcome, { ok: true }>, store: (answer: AnswerToKeep) => Promise<void>): void {
  const request = inference.request as UnifiedRequest;
  if (!isReadable(outcome.body)) {
    const body = Buffer.isBuffer(outcome.body) ? outcome.body : Buffer.from(outcome.body);
    if (request.operation === 'responses') {
      // Its status is read once the client has the answer, not before.
      const kept = setImmediate().then(() => (isFinishedResponse(parsedOrUndefined(body)) ? store({ body, usage: inference.usage }) : undefined));
      inference.waitUntil(kept);
      return;
    }
    inference.waitUntil(store({ body, usage: inference.usage }));
    return;
  }
  if (request.operation === 'embeddings') return;
  const captured = captureStream(request.operation, outcome.body);
  outcome.body = captured.stream;
  if (request.operation === 'responses' || request.operation === 'messages') {
    // The response (or message) the events carried, as it is: its usage is in its own API's form
    // already, and the gateway's own count goes with it for the log of a later hit.
    inference.waitUntil(captured.answer.then((answer) => answer && store({ body: Buffer.from(JSON.stringify(answer)), usage: inference.usage })));
    return;
  }
  inference.waitUntil(
    captured.answer.then((answer) => {
      if (!answer) return;
      // The provider reports usage to the gateway even when the client's stream leaves it out, and
      // a later non-streamed hit must carry it like any non-streamed answer.
      const usage = (answer.usage as TokenUsage | null | undefined) ?? inference.usage;
      if (usage) answer.usage = usage;
      return store({ body: Buffer.from(JSON.stringify(answer)), usage });
    }),
  );
}

function parsedOrUndefined(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
