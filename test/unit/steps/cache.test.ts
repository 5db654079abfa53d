/*
 * The `cache` target step over in-memory stores: an exact MISS calls the provider and keeps its
 * answer once the answer is complete, an identical request is then a HIT without a provider call
 * (and its log record says so), a forced refresh calls the provider again and replaces the answer,
 * answers never cross workspaces, and failed or flagged answers are never kept. Semantic mode
 * embeds the last user message with a catalog provider (the fake upstream) and finds an answer by
 * its meaning. The same behaviour over HTTP is test/integration/cache.test.ts and semantic-cache.test.ts.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { captureStream } from '../../../lib/cache/stream-capture';
import type { GatewayConfig } from '../../../lib/config/types';
import { GatewayError } from '../../../lib/core/errors';
import { isReadable } from '../../../lib/core/readable';
import { inferenceRequest } from '../../../lib/inference/inference-request';
import type { TargetStep } from '../../../lib/inference/context';
import { memoryStores, type MemoryStores } from '../../../lib/inference/memory-stores';
import { runSteps } from '../../../lib/inference/steps';
import { cacheStep } from '../../../lib/inference/steps/cache';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { resolveTargetStep } from '../../../lib/inference/steps/resolve-target';
import type { AttemptOutcome } from '../../../lib/routing/attempt-outcome';
import { useLoopbackUpstream } from '../../support/loopback-upstream';
import { chatChunk, chatDone, chatError, chatUsage, translated } from '../../support/responses-streams';
import {
  attemptAt,
  chatCompletion,
  chatRequest,
  nextAnswering,
  okOutcome,
  okResult,
  stepContext,
  testCaller,
  type StepContext,
} from '../../support/step-context';

const simple: GatewayConfig = { provider: 'openai', api_key: 'sk-cache-unit', cache: { mode: 'simple' } };
const usage = { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 };
const chat = (content: unknown, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });
const completion = (content: string) => chatCompletion(content, { usage });

type Provider = ReturnType<typeof nextAnswering<AttemptOutcome>>;

/** The provider call, standing after the cache step: answers `outcome` and reports the usage, as the call step does. */
function provider(step: StepContext, outcome: () => AttemptOutcome): Provider {
  return nextAnswering(() => {
    step.context.usage = usage;
    return outcome();
  });
}

/** The provider call that must not happen (a hit). */
const noCall = () => nextAnswering<AttemptOutcome>(() => Promise.reject(new Error('the provider was called')));

/**
 * One attempt at the config's target through `target` then `cache`, with `next` for the steps
 * after them. The `config` step runs first since `target` needs its resolver.
 */
async function attemptThrough(step: StepContext, config: GatewayConfig, next: Provider, checked?: boolean) {
  await resolveConfig.run(step.context, async () => okResult());
  const attempt = attemptAt(step.context, config);
  // What the output hooks step leaves for the cache when the target has output hooks.
  if (checked !== undefined) attempt.answerChecked = Promise.resolve(checked);
  const call: TargetStep = { name: 'call', run: () => next() };
  return runSteps([resolveTargetStep, cacheStep, call], attempt);
}

/** Ends the request as the strategy step and a worker do (the strategy copies the status to the recorder), and answers its log record. */
async function finished(step: StepContext, status = 200) {
  step.context.recorder.cached(step.context.cacheStatus);
  await step.context.finish({ status });
  expect(step.records).toHaveLength(1);
  return step.records[0]!;
}

const bodyOf = (outcome: AttemptOutcome) => {
  if (!outcome.ok || !Buffer.isBuffer(outcome.body)) throw new Error(`expected a whole answer, got ${JSON.stringify(outcome)}`);
  return JSON.parse(outcome.body.toString('utf8'));
};

/** A streamed answer in two chunks, as a provider sends it, then the end of the stream. */
const sse = [
  { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] },
  { choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }] },
]
  .map((chunk) => `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', ...chunk })}\n\n`)
  .concat('data: [DONE]\n\n');

const streamOf = (outcome: AttemptOutcome): Readable => {
  if (!outcome.ok || Buffer.isBuffer(outcome.body) || typeof outcome.body === 'string') throw new Error(`expected a stream, got ${JSON.stringify(outcome)}`);
  return outcome.body;
};

async function read(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** A request of `config` in `stores`, answered by `outcome` unless the cache answers; settled, so what it kept is in the stores. */
async function request(stores: MemoryStores, config: GatewayConfig, outcome: () => AttemptOutcome, extra: Parameters<typeof chatRequest>[1] = {}) {
  const step = stepContext(chatRequest(config, extra), stores);
  const next = provider(step, outcome);
  const answer = await attemptThrough(step, config, next);
  await step.settled();
  return { step, next, answer };
}

describe('cache step, simple mode', () => {
  it('misses, keeps the answer, then answers the identical request without calling the provider', async () => {
    const stores = memoryStores();
    const miss = await request(stores, simple, () => okOutcome(completion('Paris')));
    expect(miss.next.calls).toBe(1);
    expect(miss.step.context.cacheStatus).toBe('MISS');
    expect(bodyOf(miss.answer).choices[0].message.content).toBe('Paris');
    expect(stores.answers.entries()).toBe(1);
    expect((await finished(miss.step)).cache_status).toBe('MISS');

    const step = stepContext(chatRequest(simple), stores);
    const next = noCall();
    const hit = await attemptThrough(step, simple, next);
    expect(next.calls).toBe(0);
    expect(step.context.cacheStatus).toBe('HIT');
    expect(hit).toMatchObject({ ok: true, status: 200, headers: { 'x-gateway-provider': 'openai', 'content-type': 'application/json' } });
    expect(bodyOf(hit)).toEqual(completion('Paris'));
    // A hit spends nothing: the tokens the stored answer cost are its saved usage, not its usage.
    const record = await finished(step);
    expect(record).toMatchObject({ cache_status: 'HIT', saved_usage: usage, provider: 'openai', model: 'gpt-4o-mini', cost: 0 });
    expect(record.usage).toBeUndefined();
  });

  it('keeps a streamed answer once the stream has ended cleanly, never a part of it', async () => {
    const stores = memoryStores();
    const step = stepContext(chatRequest(simple, { body: chat('stream me', { stream: true }) }), stores);
    const upstream = new PassThrough();
    const next = provider(step, () => ({ ok: true, status: 200, headers: { 'content-type': 'text/event-stream' }, body: upstream }));
    const outcome = await attemptThrough(step, simple, next);
    expect([next.calls, step.context.cacheStatus]).toEqual([1, 'MISS']);
    const relayed = read(streamOf(outcome));

    upstream.write(sse[0]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The client has read all there is so far; the answer is not complete, so nothing is kept yet.
    expect(stores.answers.entries()).toBe(0);
    upstream.end(sse.slice(1).join(''));
    // The client gets the provider's bytes unchanged; the cache assembles the answer beside them.
    expect(await relayed).toBe(sse.join(''));
    await step.settled();
    expect(stores.answers.entries()).toBe(1);

    // `stream` is how the answer is delivered, not what it is: the whole-body request hits the assembled answer.
    const again = await request(stores, simple, () => okOutcome(), { body: chat('stream me') });
    expect([again.next.calls, again.step.context.cacheStatus]).toEqual([0, 'HIT']);
    expect(bodyOf(again.answer).choices[0]).toMatchObject({ message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' });
  });

  it('keeps nothing of a stream that breaks before its end', async () => {
    const stores = memoryStores();
    const step = stepContext(chatRequest(simple, { body: chat('stream me', { stream: true }) }), stores);
    const upstream = new PassThrough();
    const next = provider(step, () => ({ ok: true, status: 200, headers: { 'content-type': 'text/event-stream' }, body: upstream }));
    const relayed = read(streamOf(await attemptThrough(step, simple, next)));
    upstream.write(sse[0]);
    upstream.destroy(new Error('connection reset'));
    await expect(relayed).rejects.toThrow('connection reset');
    await step.settled();
    expect(stores.answers.entries()).toBe(0);
  });

  it('calls the provider on a forced refresh and replaces the stored answer', async () => {
    const stores = memoryStores();
    await request(stores, simple, () => okOutcome(completion('old')));
    const refresh = await request(stores, simple, () => okOutcome(completion('new')), { options: { cache: { forceRefresh: true } } });
    expect([refresh.next.calls, refresh.step.context.cacheStatus]).toEqual([1, 'REFRESH']);
    expect(bodyOf(refresh.answer).choices[0].message.content).toBe('new');
    expect((await finished(refresh.step)).cache_status).toBe('REFRESH');

    const after = await request(stores, simple, () => okOutcome(completion('never')));
    expect([after.next.calls, after.step.context.cacheStatus]).toEqual([0, 'HIT']);
    expect(bodyOf(after.answer).choices[0].message.content).toBe('new');
    expect(stores.answers.entries()).toBe(1);
  });

  it("never answers one workspace's request with another's answer", async () => {
    const stores = memoryStores();
    await request(stores, simple, () => okOutcome(completion('for ws_steps')));
    const other = await request(stores, simple, () => okOutcome(completion('for ws_other')), { caller: { ...testCaller, workspaceId: 'ws_other' } });
    expect([other.next.calls, other.step.context.cacheStatus]).toEqual([1, 'MISS']);
    expect(bodyOf(other.answer).choices[0].message.content).toBe('for ws_other');
    expect(stores.answers.entries()).toBe(2);
    // Different metadata is a partition of its own within the workspace, too.
    const tagged = await request(stores, simple, () => okOutcome(completion('tagged')), { metadata: { team: 'a' } });
    expect([tagged.next.calls, tagged.step.context.cacheStatus]).toEqual([1, 'MISS']);
  });

  it('keeps no failed answer, so the next identical request calls the provider again', async () => {
    const stores = memoryStores();
    const failed = (): AttemptOutcome => ({ ok: false, status: 502, headers: {}, error: new GatewayError(502, 'upstream down'), network: false });
    const first = await request(stores, simple, failed);
    expect(first.answer).toMatchObject({ ok: false, status: 502 });
    expect([first.next.calls, first.step.context.cacheStatus]).toEqual([1, 'MISS']);
    expect(stores.answers.entries()).toBe(0);
    const second = await request(stores, simple, () => okOutcome(completion('recovered')));
    expect([second.next.calls, second.step.context.cacheStatus]).toEqual([1, 'MISS']);
    expect(stores.answers.entries()).toBe(1);
  });

  it('keeps no answer its output hooks did not pass', async () => {
    const stores = memoryStores();
    const step = stepContext(chatRequest(simple), stores);
    const next = provider(step, () => okOutcome(completion('flagged')));
    await attemptThrough(step, simple, next, false);
    await step.settled();
    expect([next.calls, stores.answers.entries()]).toEqual([1, 0]);
  });

  it('does nothing without a cache setting', async () => {
    const stores = memoryStores();
    const plain: GatewayConfig = { provider: 'openai', api_key: 'sk-cache-unit' };
    for (const _ of [1, 2]) {
      const { next, step } = await request(stores, plain, () => okOutcome(completion('uncached')));
      expect([next.calls, step.context.cacheStatus]).toEqual([1, 'DISABLED']);
    }
    expect(stores.answers.entries()).toBe(0);
  });
});

describe('cache step, semantic mode', () => {
  const semantic: GatewayConfig = { ...simple, cache: { mode: 'semantic' } };
  const question = 'What is the capital of France?';
  const loopback = useLoopbackUpstream();

  function semanticStores() {
    const stores = memoryStores();
    stores.catalog.save(testCaller.workspaceId, {
      slug: 'embedder',
      provider: 'openai',
      custom_host: `${loopback.upstream.url}/v1`,
      credentials: { api_key: 'sk-embed' },
    });
    stores.answers.settings.set(testCaller.workspaceId, {
      embedding_provider: '@embedder',
      embedding_model: 'text-embedding-3-small',
      similarity_threshold: 0.9,
    });
    return stores;
  }
  const embedded = () => loopback.upstream.requests.filter((sent) => sent.path === '/v1/embeddings').map((sent) => (sent.json as { input: string }).input);

  it('misses by meaning, then finds the answer for the same text sent another way', async () => {
    loopback.upstream.reset();
    const stores = semanticStores();
    const miss = await request(stores, semantic, () => okOutcome(completion('Paris')), { body: chat(question) });
    expect([miss.next.calls, miss.step.context.cacheStatus]).toEqual([1, 'SEMANTIC MISS']);
    expect(stores.answers.entries()).toBe(1);

    // The same text as a list of parts: another body, so another exact key (the exact lookup
    // misses), but the same last user message and the same everything else, so the same scope.
    const parts = await request(stores, semantic, () => okOutcome(completion('never')), { body: chat([{ type: 'text', text: question }]) });
    expect([parts.next.calls, parts.step.context.cacheStatus]).toEqual([0, 'SEMANTIC HIT']);
    expect(bodyOf(parts.answer).choices[0].message.content).toBe('Paris');
    // The embedding is spend even on a hit (the fake counts ceil(30 / 4) tokens).
    expect(await finished(parts.step)).toMatchObject({ cache_status: 'SEMANTIC HIT', cache_embedding_usage: { prompt_tokens: 8, total_tokens: 8 } });
    expect(embedded()).toEqual([question, question]);

    // Another question embeds far from it: a miss, answered by the provider.
    const other = await request(stores, semantic, () => okOutcome(completion('the Seine')), { body: chat('Which rivers cross Paris?') });
    expect([other.next.calls, other.step.context.cacheStatus]).toEqual([1, 'SEMANTIC MISS']);
    expect(stores.answers.entries()).toBe(2);
  });

  it('caches exactly when the workspace has no semantic settings', async () => {
    loopback.upstream.reset();
    const stores = memoryStores();
    const miss = await request(stores, semantic, () => okOutcome(completion('Paris')), { body: chat(question) });
    expect([miss.next.calls, miss.step.context.cacheStatus]).toEqual([1, 'MISS']);
    const parts = await request(stores, semantic, () => okOutcome(completion('Paris again')), { body: chat([{ type: 'text', text: question }]) });
    expect([parts.next.calls, parts.step.context.cacheStatus]).toEqual([1, 'MISS']);
    expect(embedded()).toEqual([]);
  });
});

describe('cache step, Responses requests', () => {
  const responsesRequest = (body: Record<string, unknown>) =>
    inferenceRequest({
      kind: 'unified',
      operation: 'responses',
      body: { model: 'gpt-4.1-mini', input: 'Name a prime.', ...body },
      caller: testCaller,
      options: { config: { kind: 'inline', config: simple } },
    });

  /** A request of the Responses API through `target` and `cache`, answered by `outcome` unless the cache answers; settled. */
  async function respond(stores: MemoryStores, body: Record<string, unknown>, outcome: () => AttemptOutcome) {
    const step = stepContext(responsesRequest(body), stores);
    const next = provider(step, outcome);
    const answer = await attemptThrough(step, simple, next);
    const relayed = answer.ok && isReadable(answer.body) ? await read(answer.body) : undefined;
    await step.settled();
    return { step, next, answer, relayed };
  }

  const streamed = (wire: string) => (): AttemptOutcome => ({
    ok: true,
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: Readable.from([wire]),
  });

  it('keeps a streamed response as its last event carries it, and replays it as Responses events', async () => {
    const { wire, final } = await translated([
      chatChunk({ role: 'assistant', content: '' }),
      chatChunk({ content: 'Seven, a prime.' }),
      chatChunk({}, 'stop'),
      chatUsage,
      chatDone,
    ]);
    const stores = memoryStores();
    const miss = await respond(stores, { stream: true }, streamed(wire));
    expect([miss.next.calls, miss.step.context.cacheStatus, miss.relayed]).toEqual([1, 'MISS', wire]);
    expect(stores.answers.entries()).toBe(1);

    // Whole: the stored response as it came, its usage in the Responses form, not the gateway's count.
    const whole = await respond(stores, {}, () => okOutcome());
    expect([whole.next.calls, whole.step.context.cacheStatus]).toEqual([0, 'HIT']);
    expect(bodyOf(whole.answer)).toEqual(final);
    expect(bodyOf(whole.answer).usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });

    // Streamed: the Responses events, with no usage chunk to ask for, read back as the stored response.
    const hit = await respond(stores, { stream: true, stream_options: { include_usage: true } }, () => okOutcome());
    expect([hit.next.calls, hit.step.context.cacheStatus]).toEqual([0, 'HIT']);
    expect(hit.answer).toMatchObject({ ok: true, status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' } });
    const replay = hit.answer.ok ? hit.answer.body.toString() : '';
    expect(replay).not.toContain('[DONE]');
    expect(replay.startsWith('event: response.created\n')).toBe(true);
    const captured = captureStream('responses', Readable.from([replay]));
    captured.stream.resume();
    expect(await captured.answer).toEqual(final);
  });

  it('keeps nothing of a streamed response that failed', async () => {
    const { wire } = await translated([chatChunk({ role: 'assistant', content: '' }), chatChunk({ content: 'Sev' }), chatError, chatDone]);
    const stores = memoryStores();
    const miss = await respond(stores, { stream: true }, streamed(wire));
    expect([miss.next.calls, miss.relayed]).toEqual([1, wire]);
    expect(stores.answers.entries()).toBe(0);
  });

  it('keeps a whole response only once it is finished', async () => {
    const response = (status: string) => ({ id: 'resp_1', object: 'response', status, output: [], output_text: '', usage: null });
    for (const status of ['queued', 'in_progress', 'failed', 'cancelled']) {
      const stores = memoryStores();
      await respond(stores, {}, () => okOutcome(response(status)));
      expect([status, stores.answers.entries()]).toEqual([status, 0]);
    }
    for (const status of ['completed', 'incomplete']) {
      const stores = memoryStores();
      await respond(stores, {}, () => okOutcome(response(status)));
      const again = await respond(stores, {}, () => okOutcome());
      expect([status, again.step.context.cacheStatus, bodyOf(again.answer)]).toEqual([status, 'HIT', response(status)]);
    }
  });
});
