import { describe, expect, it } from 'vitest';
import { defaultCompletionTokens, estimateTokens } from '../../../lib/ratelimit/estimate';
import { readTotals } from '../../../lib/store/reserved-counters';

describe('estimateTokens', () => {
  it("reserves a quarter of the body's bytes for the prompt and the request's own completion cap", () => {
    expect(estimateTokens({ bytes: 81, body: { max_tokens: 12 } })).toEqual({ prompt: 21, completion: 12 });
    // OpenAI's newer name wins over the older one.
    expect(estimateTokens({ bytes: 4, body: { max_tokens: 12, max_completion_tokens: 30 } })).toEqual({ prompt: 1, completion: 30 });
  });

  it("takes the target's override_params over the body", () => {
    expect(estimateTokens({ bytes: 0, body: { max_tokens: 12 }, overrides: { max_tokens: 500 } }).completion).toBe(500);
  });

  it('reserves the documented default without a usable cap, and no completion for embeddings', () => {
    for (const body of [{}, { max_tokens: 0 }, { max_tokens: -5 }, { max_tokens: 2.5 }, { max_tokens: '100' }])
      expect(estimateTokens({ bytes: 8, body }).completion).toBe(defaultCompletionTokens);
    expect(estimateTokens({ bytes: 8 }).completion).toBe(defaultCompletionTokens);
    expect(estimateTokens({ bytes: 8, body: { max_tokens: 50 }, embeddings: true })).toEqual({ prompt: 2, completion: 0 });
  });
});

describe('readTotals', () => {
  it('counts as settled what no quarter hour still holds in reservations', () => {
    expect(readTotals({ n: { N: '120' }, r100: { N: '30' }, r101: { N: '0' }, expiresAt: { N: '99' } })).toEqual({ total: 120, settled: 90 });
    // An item written before reservations existed holds only its usage.
    expect(readTotals({ n: { N: '7' } })).toEqual({ total: 7, settled: 7 });
    expect(readTotals(undefined)).toEqual({ total: 0, settled: 0 });
  });
});
