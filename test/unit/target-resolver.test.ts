import { describe, expect, it } from 'vitest';
import { targetResolver } from '../../lib/inference/target';
import { buildPlan, leavesOf } from '../../lib/routing/plan';

describe('targetResolver', () => {
  it('resolves each leaf once per request, however often it is attempted', async () => {
    const plan = buildPlan({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'sk-a' }, { provider: 'anthropic', api_key: 'sk-b' }] });
    const [first, second] = leavesOf(plan);
    const targetOf = targetResolver({}, 'ws_test', true);
    const attempts = [targetOf(first!), targetOf(first!), targetOf(second!)];
    expect(attempts[0]).toBe(attempts[1]);
    expect(attempts[2]).not.toBe(attempts[0]);
    const [a, again, b] = await Promise.all(attempts);
    expect(a).toBe(again);
    expect([a.provider.name, a.settings.api_key, b.provider.name]).toEqual(['openai', 'sk-a', 'anthropic']);
  });
});
