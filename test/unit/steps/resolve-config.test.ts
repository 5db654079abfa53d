/*
 * The `config` step over in-memory stores: which plan a request gets (its headers, an inline config,
 * a saved config by id and by version), that a saved config is only found in its own workspace, that
 * nothing after the step runs when the config is refused, and that the resolver it leaves on the
 * context resolves the plan's leaves.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../../lib/config/types';
import type { InferenceCaller } from '../../../lib/inference/inference-request';
import { memoryStores, type MemoryStores } from '../../../lib/inference/memory-stores';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { leavesOf } from '../../../lib/routing/plan';
import { chatRequest, nextAnswering, okResult, stepContext, testCaller } from '../../support/step-context';

const otherWorkspace: InferenceCaller = { organisationId: 'org_other', workspaceId: 'ws_other', keyId: 'key_other' };

/** Runs the step for a request that names the saved config `ref`, as `caller`. */
async function withSavedRef(ref: string, stores: MemoryStores, caller: InferenceCaller = testCaller) {
  const step = stepContext(chatRequest(undefined, { caller, options: { config: { kind: 'saved', ref } } }), stores);
  const next = nextAnswering(okResult);
  const run = resolveConfig.run(step.context, next);
  return { ...step, next, run };
}

describe('resolveConfig', () => {
  it('plans from the headers when the request names no config, and calls next once with the plan set', async () => {
    const { context } = stepContext(chatRequest(undefined, { options: { credentials: { provider: 'anthropic', apiKey: 'sk-header' } } }));
    const answer = okResult();
    const next = nextAnswering(() => answer);

    expect(await resolveConfig.run(context, next)).toBe(answer);
    expect(next.calls).toBe(1);
    expect(context.plan).toMatchObject({ identity: 'headers', fromConfig: false, saved: false });
    expect(context.plan!.root).toMatchObject({ path: 'config', config: {}, children: [] });
    // Without a config, the headers alone select the provider of the one leaf.
    const target = await context.targetOf!(context.plan!.root);
    expect([target.provider.name, target.settings.api_key]).toEqual(['anthropic', 'sk-header']);
  });

  it('plans an inline config under the SHA-256 of its canonical JSON, whatever order its keys were written in', async () => {
    const config: GatewayConfig = {
      targets: [
        { provider: 'openai', api_key: 'sk-a' },
        { api_key: 'sk-b', provider: 'anthropic' },
      ],
      strategy: { mode: 'fallback' },
    };
    // Spelled out by hand, keys sorted at every level: the identity must not depend on how lib builds it.
    const canonical = '{"strategy":{"mode":"fallback"},"targets":[{"api_key":"sk-a","provider":"openai"},{"api_key":"sk-b","provider":"anthropic"}]}';
    const expected = `inline:${createHash('sha256').update(canonical).digest('hex')}`;

    const { context } = stepContext(chatRequest(config));
    const next = nextAnswering(okResult);
    await resolveConfig.run(context, next);
    expect(next.calls).toBe(1);
    expect(context.plan).toMatchObject({ identity: expected, fromConfig: true, saved: false });
    expect(leavesOf(context.plan!.root).map((leaf) => [leaf.path, leaf.config.provider])).toEqual([
      ['config.targets[0]', 'openai'],
      ['config.targets[1]', 'anthropic'],
    ]);

    // Equal configs share breaker state; a config that differs in one value does not.
    const reordered = stepContext(
      chatRequest({
        strategy: { mode: 'fallback' },
        targets: [
          { api_key: 'sk-a', provider: 'openai' },
          { provider: 'anthropic', api_key: 'sk-b' },
        ],
      }),
    ).context;
    await resolveConfig.run(reordered, nextAnswering(okResult));
    expect(reordered.plan!.identity).toBe(expected);
    const changed = stepContext(chatRequest({ ...config, targets: [{ provider: 'openai', api_key: 'sk-c' }, config.targets![1]!] })).context;
    await resolveConfig.run(changed, nextAnswering(okResult));
    expect(changed.plan!.identity).toMatch(/^inline:[0-9a-f]{64}$/);
    expect(changed.plan!.identity).not.toBe(expected);
  });

  it('reads a saved config by id as its latest version, and the version a ref pins', async () => {
    const stores = memoryStores();
    const v1: GatewayConfig = { provider: 'openai', api_key: 'sk-v1' };
    const v2: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [{ provider: 'anthropic', api_key: 'sk-v2' }] };
    const first = stores.configs.save(testCaller.workspaceId, v1);
    const second = stores.configs.save(testCaller.workspaceId, v2, first.id);
    expect([first.id, first.version, second.id, second.version]).toEqual([first.id, 1, first.id, 2]);
    expect(first.id).toMatch(/^cfg_[0-9a-z]+$/);

    const planOf = async (ref: string) => {
      const { context, next, run } = await withSavedRef(ref, stores);
      await run;
      expect(next.calls).toBe(1);
      return context.plan!;
    };
    const latest = await planOf(first.id);
    expect(latest).toMatchObject({ identity: first.id, fromConfig: true, saved: true });
    expect(latest.root.config).toEqual(v2);
    expect((await planOf(`${first.id}@latest`)).root.config).toEqual(v2);
    // The pinned version wins over the newer one.
    const pinned = await planOf(`${first.id}@1`);
    expect(pinned.root.config).toEqual(v1);
    expect(pinned).toMatchObject({ identity: first.id, saved: true });
    expect((await planOf(`${first.id}@2`)).root.config).toEqual(v2);

    const missingVersion = await withSavedRef(`${first.id}@3`, stores);
    await expect(missingVersion.run).rejects.toMatchObject({ status: 400, code: 'config_not_found', param: 'x-gateway-config' });
    expect(missingVersion.next.calls).toBe(0);
  });

  it("does not find another workspace's saved config, and runs nothing after it", async () => {
    const stores = memoryStores();
    const theirs = stores.configs.save(otherWorkspace.workspaceId, { provider: 'openai', api_key: 'sk-theirs' });

    const refused = await withSavedRef(theirs.id, stores);
    await expect(refused.run).rejects.toMatchObject({ status: 400, code: 'config_not_found', param: 'x-gateway-config' });
    await expect(refused.run).rejects.toThrow(`saved config "${theirs.id}" that does not exist in this workspace`);
    expect(refused.next.calls).toBe(0);
    expect(refused.context.plan).toBeUndefined();
    expect(refused.context.targetOf).toBeUndefined();

    // The same ref from its own workspace finds it: the refusal was the workspace, not the ref.
    const owner = await withSavedRef(theirs.id, stores, otherWorkspace);
    await owner.run;
    expect(owner.context.plan!.root.config).toEqual({ provider: 'openai', api_key: 'sk-theirs' });
  });

  it('keeps two workspaces that saved a config under the same id to their own', async () => {
    const stores = memoryStores();
    stores.configs.save(testCaller.workspaceId, { provider: 'openai', api_key: 'sk-ours' }, 'cfg_shared');
    stores.configs.save(otherWorkspace.workspaceId, { provider: 'anthropic', api_key: 'sk-theirs' }, 'cfg_shared');

    const ours = await withSavedRef('cfg_shared', stores);
    const theirs = await withSavedRef('cfg_shared', stores, otherWorkspace);
    await Promise.all([ours.run, theirs.run]);
    expect(ours.context.plan!.root.config).toEqual({ provider: 'openai', api_key: 'sk-ours' });
    expect(theirs.context.plan!.root.config).toEqual({ provider: 'anthropic', api_key: 'sk-theirs' });
    const [ourTarget, theirTarget] = await Promise.all([ours.context.targetOf!(ours.context.plan!.root), theirs.context.targetOf!(theirs.context.plan!.root)]);
    expect([ourTarget.provider.name, ourTarget.settings.api_key, theirTarget.provider.name, theirTarget.settings.api_key]).toEqual([
      'openai',
      'sk-ours',
      'anthropic',
      'sk-theirs',
    ]);
  });

  it('refuses a saved config that names a prompt_id, before anything after it runs', async () => {
    const stores = memoryStores();
    const saved = stores.configs.save(testCaller.workspaceId, { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', prompt_id: 'pp_1' }] });
    const { run, next, context } = await withSavedRef(saved.id, stores);
    await expect(run).rejects.toMatchObject({ status: 400, code: 'prompt_id_unsupported', param: 'config.targets[0].prompt_id' });
    expect(next.calls).toBe(0);
    expect(context.plan).toBeUndefined();
  });

  it("leaves a resolver of the plan's leaves over the context's catalog, resolving each leaf once", async () => {
    const stores = memoryStores();
    stores.catalog.save(testCaller.workspaceId, { slug: 'team-openai', provider: 'openai', credentials: { api_key: 'sk-team' } });
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [{ provider: '@team-openai' }, { provider: 'anthropic', api_key: 'sk-b' }] };
    const { context } = stepContext(chatRequest(config), stores);
    await resolveConfig.run(context, nextAnswering(okResult));

    const [first, second] = leavesOf(context.plan!.root);
    const once = context.targetOf!(first!);
    expect(context.targetOf!(first!)).toBe(once);
    const [catalogTarget, ownTarget] = await Promise.all([once, context.targetOf!(second!)]);
    expect([catalogTarget.provider.name, catalogTarget.settings.api_key]).toEqual(['openai', 'sk-team']);
    expect([ownTarget.provider.name, ownTarget.settings.api_key]).toEqual(['anthropic', 'sk-b']);
  });

  it("hands the resolver a saved plan's flag: a stored key may not follow a host the request names", async () => {
    const stores = memoryStores();
    const config: GatewayConfig = { api_key: 'sk-stored' };
    const saved = stores.configs.save(testCaller.workspaceId, config);
    const credentials = { provider: 'openai', customHost: 'https://elsewhere.example/v1' };

    const fromSaved = stepContext(chatRequest(undefined, { options: { config: { kind: 'saved', ref: saved.id }, credentials } }), stores).context;
    await resolveConfig.run(fromSaved, nextAnswering(okResult));
    await expect(fromSaved.targetOf!(fromSaved.plan!.root)).rejects.toMatchObject({ status: 400, code: 'catalog_host_fixed', param: 'x-gateway-custom-host' });

    // The same config inline carries the caller's own key, which may go where the caller says.
    const inline = stepContext(chatRequest(config, { options: { credentials } }), stores).context;
    await resolveConfig.run(inline, nextAnswering(okResult));
    const target = await inline.targetOf!(inline.plan!.root);
    expect([target.provider.name, target.baseUrl, target.settings.api_key]).toEqual(['openai', 'https://elsewhere.example/v1', 'sk-stored']);
  });
});
