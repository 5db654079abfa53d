/*
 * The `target` step over in-memory stores: a target naming a catalog entry (`@slug`) gets that
 * entry's provider and credentials, only from the caller's own workspace; the log record names the
 * provider the attempt went to; a leaf is resolved once however often it is attempted; and the step
 * refuses to run before the `config` step.
 */
import { describe, expect, it, vi } from 'vitest';
import type { GatewayConfig } from '../../../lib/config/types';
import type { TargetAttempt } from '../../../lib/inference/context';
import type { InferenceCaller } from '../../../lib/inference/inference-request';
import { memoryStores, type MemoryStores } from '../../../lib/inference/memory-stores';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { resolveTargetStep } from '../../../lib/inference/steps/resolve-target';
import { attemptAt, chatRequest, nextAnswering, okOutcome, okResult, stepContext, testCaller } from '../../support/step-context';

const otherWorkspace: InferenceCaller = { organisationId: 'org_other', workspaceId: 'ws_other', keyId: 'key_other' };
const teamOpenai = { slug: 'team-openai', provider: 'openai', credentials: { api_key: 'sk-team' } };
const viaCatalog: GatewayConfig = { provider: '@team-openai' };

/** The request's context once the `config` step ran, as the target steps find it. */
async function configured(config: GatewayConfig, stores: MemoryStores = memoryStores(), caller: InferenceCaller = testCaller) {
  const step = stepContext(chatRequest(config, { caller }), stores);
  await resolveConfig.run(step.context, nextAnswering(okResult));
  return step;
}

/** Another attempt at the same leaf, as a retry makes one: nothing set but the leaf. */
const retryOf = (attempt: TargetAttempt): TargetAttempt => ({ ...attempt, target: undefined, timeout: undefined, body: undefined, shaping: undefined });

describe('resolveTargetStep', () => {
  it('gives the attempt the provider, credentials and host of the catalog entry its target names, then calls next once', async () => {
    const stores = memoryStores();
    stores.catalog.save(testCaller.workspaceId, { ...teamOpenai, custom_host: 'https://models.example/v1' });
    const { context } = await configured(viaCatalog, stores);
    const attempt = attemptAt(context, viaCatalog);
    const answer = okOutcome();
    const next = nextAnswering(() => answer);

    expect(await resolveTargetStep.run(attempt, next)).toBe(answer);
    expect(next.calls).toBe(1);
    expect(attempt.target!.provider.name).toBe('openai');
    expect(attempt.target!.settings.api_key).toBe('sk-team');
    expect(attempt.target!.baseUrl).toBe('https://models.example/v1');
  });

  it("does not find another workspace's catalog entry, and calls nothing after it", async () => {
    const stores = memoryStores();
    stores.catalog.save(otherWorkspace.workspaceId, teamOpenai);
    const { context, records } = await configured(viaCatalog, stores);
    const attempt = attemptAt(context, viaCatalog);
    const next = nextAnswering(okOutcome);

    await expect(resolveTargetStep.run(attempt, next)).rejects.toMatchObject({ status: 400, code: 'unknown_provider', param: 'config.provider' });
    expect(next.calls).toBe(0);
    expect(attempt.target).toBeUndefined();
    // No attempt reached a provider, so the log names none.
    await context.finish({ status: 400 });
    expect(records).toHaveLength(1);
    expect(records[0]!.provider).toBeUndefined();

    // The entry's own workspace finds it with the same config: the refusal was the workspace.
    const owner = await configured(viaCatalog, stores, otherWorkspace);
    const ownAttempt = attemptAt(owner.context, viaCatalog);
    await resolveTargetStep.run(ownAttempt, nextAnswering(okOutcome));
    expect(ownAttempt.target!.settings.api_key).toBe('sk-team');
  });

  it('gives each workspace its own entry when both have one under the same slug', async () => {
    const stores = memoryStores();
    stores.catalog.save(testCaller.workspaceId, teamOpenai);
    stores.catalog.save(otherWorkspace.workspaceId, { slug: 'team-openai', provider: 'anthropic', credentials: { api_key: 'sk-other' } });
    const ours = attemptAt((await configured(viaCatalog, stores)).context, viaCatalog);
    const theirs = attemptAt((await configured(viaCatalog, stores, otherWorkspace)).context, viaCatalog);
    await Promise.all([resolveTargetStep.run(ours, nextAnswering(okOutcome)), resolveTargetStep.run(theirs, nextAnswering(okOutcome))]);
    expect([ours.target!.provider.name, ours.target!.settings.api_key]).toEqual(['openai', 'sk-team']);
    expect([theirs.target!.provider.name, theirs.target!.settings.api_key]).toEqual(['anthropic', 'sk-other']);
  });

  it("tells the recorder the provider, and the log record keeps the last attempt's", async () => {
    const stores = memoryStores();
    stores.catalog.save(testCaller.workspaceId, teamOpenai);
    const fallback: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [viaCatalog, { provider: 'anthropic', api_key: 'sk-b' }] };

    const single = await configured(viaCatalog, stores);
    await resolveTargetStep.run(attemptAt(single.context, viaCatalog), nextAnswering(okOutcome));
    await single.context.finish({ status: 200 });
    expect(single.records).toHaveLength(1);
    // The provider's own name, not the slug the config used for it.
    expect(single.records[0]).toMatchObject({ provider: 'openai', status: 200, workspace_id: testCaller.workspaceId });

    const both = await configured(fallback, stores);
    await resolveTargetStep.run(attemptAt(both.context, fallback, 0), nextAnswering(okOutcome));
    await resolveTargetStep.run(attemptAt(both.context, fallback, 1), nextAnswering(okOutcome));
    await both.context.finish({ status: 200 });
    expect(both.records.map((record) => record.provider)).toEqual(['anthropic']);
  });

  it('resolves a leaf once however often it is attempted: the same target object, one catalog read', async () => {
    const stores = memoryStores();
    stores.catalog.save(testCaller.workspaceId, teamOpenai);
    const find = vi.spyOn(stores.catalog, 'find');
    const { context } = await configured(viaCatalog, stores);
    const first = attemptAt(context, viaCatalog);
    const retry = retryOf(first);

    await resolveTargetStep.run(first, nextAnswering(okOutcome));
    await resolveTargetStep.run(retry, nextAnswering(okOutcome));
    expect(retry.target).toBe(first.target);
    expect(find).toHaveBeenCalledTimes(1);
    expect(find).toHaveBeenCalledWith(testCaller.workspaceId, 'team-openai');

    // Another request resolves its own: the once is per request, not per process.
    const another = attemptAt((await configured(viaCatalog, stores)).context, viaCatalog);
    await resolveTargetStep.run(another, nextAnswering(okOutcome));
    expect(another.target).not.toBe(first.target);
    expect(find).toHaveBeenCalledTimes(2);
  });

  it('refuses to run before the config step, naming it, and calls nothing after it', async () => {
    const { context } = stepContext(chatRequest(viaCatalog));
    const attempt = attemptAt(context, viaCatalog);
    const next = nextAnswering(okOutcome);
    // Wrapped so the refusal is caught whether the step throws or rejects.
    await expect(Promise.resolve().then(() => resolveTargetStep.run(attempt, next))).rejects.toThrow('The "config" step must run before this one.');
    expect(next.calls).toBe(0);
    expect(attempt.target).toBeUndefined();
  });
});
