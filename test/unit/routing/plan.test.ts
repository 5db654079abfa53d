import { describe, expect, it } from 'vitest';
import { buildPlan } from '../../../lib/routing/plan';

describe('buildPlan inheritance', () => {
  it('merges override_params down the tree (child wins) and lets a child replace inherited settings', () => {
    const plan = buildPlan({
      override_params: { temperature: 0, max_tokens: 10 },
      retry: { attempts: 2 },
      request_timeout: 5000,
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'k', override_params: { max_tokens: 99 }, retry: { attempts: 0 } },
        { provider: 'groq', api_key: 'k', custom_host: 'http://h/v1' },
      ],
    });
    const [first, second] = plan.children;
    expect(first.path).toBe('config.targets[0]');
    expect(first.settings.override_params).toEqual({ temperature: 0, max_tokens: 99 });
    expect(first.settings.retry).toEqual({ attempts: 0 });
    expect(first.settings.request_timeout).toBe(5000);
    expect(second.settings.retry).toEqual({ attempts: 2 });
    expect(second.settings.custom_host).toBe('http://h/v1');
    expect(plan.settings.custom_host).toBeUndefined();
  });
});
