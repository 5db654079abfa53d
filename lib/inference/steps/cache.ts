import { defaultPartition, namespacePartition, requestKey } from '../../cache/cache-key';
import { findCachedAnswer, rememberAnswer, defaultMaxAgeSeconds, type CacheSlot } from '../../cache/response-cache';
import { replayAsSse } from '../../cache/sse-replay';
import { captureStream } from '../../cache/stream-capture';
import { isReadable } from '../../core/readable';
import type { TokenUsage } from '../../core/usage';
import type { AttemptOutcome } from '../../routing/attempt-outcome';
import type { UnifiedRequest } from '../inference-request';
import type { InferenceContext, TargetStep } from '../run-inference';
import { setByStep } from '../steps';
import { bodyForTarget } from './provider-call';

/**
 * `cache`: with a `cache` setting on the target (its own or inherited), answers a request that was
 * answered before from the stored answer, without calling the provider; otherwise calls it and
 * keeps a complete, successful answer for the next identical request. The lookup is keyed on the
 * request exactly as this target's provider would get it, so a fallback to another target looks up
 * that target's answer.
 */
export const cacheStep: TargetStep = {
  name: 'cache',
  async run(attempt, next) {
    const settings = attempt.leaf.settings.cache;
    const { inference } = attempt;
    const request = inference.request;
    if (!settings || request.kind !== 'unified') return next();
    const target = setByStep(attempt.target, 'target');
    const body = bodyForTarget(request, attempt.leaf);
    const { namespace, forceRefresh } = request.options.cache;
    const slot: CacheSlot = {
      workspaceId: request.caller.workspaceId,
      partition: namespace !== undefined ? namespacePartition(namespace) : defaultPartition(request.metadata, target),
      key: requestKey(request.operation, target, body),
    };

    if (!forceRefresh) {
      const stored = await findCachedAnswer(slot);
      if (stored) {
        inference.cacheStatus = 'HIT';
        inference.recorder.sentModel(body.model);
        inference.recorder.servedFromCache(stored.usage);
        return answerFromCache(request, stored.body, target.provider.name);
      }
    }
    inference.cacheStatus = forceRefresh ? 'REFRESH' : 'MISS';
    const outcome = await next();
    if (outcome.ok && outcome.status >= 200 && outcome.status < 300) keepAnswer(inference, outcome, slot, settings.max_age ?? defaultMaxAgeSeconds);
    return outcome;
  },
};

/** The stored answer as this request wants it: the JSON body, or replayed as a stream. */
function answerFromCache(request: UnifiedRequest, stored: Buffer, provider: string): AttemptOutcome {
  const headers = { 'x-gateway-provider': provider };
  if (!request.stream || request.operation === 'embeddings') return { ok: true, status: 200, headers: { ...headers, 'content-type': 'application/json' }, body: stored };
  const includeUsage = (request.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  return {
    ok: true,
    status: 200,
    headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    body: replayAsSse(JSON.parse(stored.toString('utf8')), request.operation, { includeUsage }),
  };
}

/**
 * Stores the answer once it is complete: a whole body at once, a stream when it has ended cleanly
 * (an error event or a broken stream is never kept). The write happens after the client has its
 * answer, through `waitUntil`.
 */
function keepAnswer(inference: InferenceContext, outcome: Extract<AttemptOutcome, { ok: true }>, slot: CacheSlot, maxAgeSeconds: number): void {
  const request = inference.request as UnifiedRequest;
  if (!isReadable(outcome.body)) {
    const body = Buffer.isBuffer(outcome.body) ? outcome.body : Buffer.from(outcome.body);
    inference.waitUntil(rememberAnswer(slot, { body, usage: inference.usage }, maxAgeSeconds));
    return;
  }
  if (request.operation === 'embeddings') return;
  const captured = captureStream(request.operation, outcome.body);
  outcome.body = captured.stream;
  inference.waitUntil(
    captured.answer.then((answer) => {
      if (!answer) return;
      // The provider reports usage to the gateway even when the client's stream leaves it out, and
      // a later non-streamed hit must carry it like any non-streamed answer.
      const usage = (answer.usage as TokenUsage | null | undefined) ?? inference.usage;
      if (usage) answer.usage = usage;
      return rememberAnswer(slot, { body: Buffer.from(JSON.stringify(answer)), usage }, maxAgeSeconds);
    }),
  );
}
