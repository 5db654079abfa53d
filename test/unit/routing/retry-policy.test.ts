import { describe, expect, it } from 'vitest';
import { retryAfterMs, retryDelayMs, shouldRetry } from '../../../lib/routing/retry-policy';

describe('retry policy', () => {
  it('retries the default statuses and network errors', () => {
    expect(shouldRetry({ attempts: 1 }, { status: 503, network: false, headers: {} })).toBe(true);
    expect(shouldRetry({ attempts: 1 }, { status: 400, network: false, headers: {} })).toBe(false);
    expect(shouldRetry({ attempts: 1 }, { status: 502, network: true, headers: {} })).toBe(true);
    expect(shouldRetry({ attempts: 1, on_status_codes: [400] }, { status: 400, network: false, headers: {} })).toBe(true);
  });

  it('reads retry-after-ms, retry-after seconds and retry-after dates', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(retryAfterMs({ 'retry-after-ms': '1500' }, now)).toBe(1500);
    expect(retryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': 'Sun, 22 Nov 2026 10:00:03 GMT' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
  });

  it('uses Retry-After only when asked to, else exponential backoff with jitter', () => {
    const failure = { status: 429, network: false, headers: { 'retry-after': '3' } };
    expect(retryDelayMs({ attempts: 3, use_retry_after_headers: true }, 1, failure)).toBe(3000);
    process.env.GATEWAY_RETRY_BASE_MS = '100';
    for (const retryNumber of [1, 2, 3]) {
      const delay = retryDelayMs({ attempts: 3 }, retryNumber, failure);
      const ceiling = 100 * 2 ** (retryNumber - 1);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
  });
});
