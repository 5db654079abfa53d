import { afterEach, describe, expect, it, vi } from 'vitest';
import { costOf, mergePrices, priceOf, reloadPrices } from '../../../lib/pricing/prices';
import { defaultPrices } from '../../../lib/pricing/default-prices';

afterEach(() => {
  vi.unstubAllEnvs();
  reloadPrices();
});

describe('pricing', () => {
  it('prices uncached prompt, cached prompt and completion tokens apart', () => {
    const price = { input: 2.5, output: 10, cached_input: 1.25 };
    const cost = costOf(price, { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, prompt_tokens_details: { cached_tokens: 400 } });
    expect(cost).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 200 * 10) / 1e6, 12);
  });

  it('knows the common models, and nothing it was not told', () => {
    expect(priceOf('openai', 'gpt-4o-mini')).toEqual({ input: 0.15, output: 0.6, cached_input: 0.075 });
    expect(priceOf('anthropic', 'claude-3-5-haiku-20241022')).toBeDefined();
    expect(priceOf('openai', 'gpt-4o-mini-unknown')).toBeUndefined();
    expect(priceOf('openai', 'constructor')).toBeUndefined();
    expect(costOf(undefined, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 })).toBeUndefined();
  });

  it('lays GATEWAY_PRICING over the defaults: new models, changed prices, removed ones', () => {
    vi.stubEnv(
      'GATEWAY_PRICING',
      JSON.stringify({
        openai: { 'my-finetune': { input: 3, output: 12 }, 'gpt-4o': { input: 2, output: 8 }, 'gpt-4o-mini': null },
        ollama: { llama3: { input: 0, output: 0 } },
      }),
    );
    reloadPrices();
    expect(priceOf('openai', 'my-finetune')).toEqual({ input: 3, output: 12 });
    expect(priceOf('openai', 'gpt-4o')).toEqual({ input: 2, output: 8 });
    expect(priceOf('openai', 'gpt-4o-mini')).toBeUndefined();
    expect(priceOf('ollama', 'llama3')).toEqual({ input: 0, output: 0 });
    expect(priceOf('azure-openai', 'gpt-4o-mini')).toBeDefined();
  });

  it('leaves out entries that are not prices, and keeps the rest', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const merged = mergePrices(defaultPrices, { openai: { bad: { input: -1, output: 1 }, good: { input: 1, output: 1 } } }, 'test');
    expect(merged.openai!.bad).toBeUndefined();
    expect(merged.openai!.good).toEqual({ input: 1, output: 1 });
    expect(errors).toHaveBeenCalledOnce();
    errors.mockRestore();
  });
});
