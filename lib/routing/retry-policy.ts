import type { RetrySettings } from '../config/types';

/** Statuses retried when `retry.on_status_codes` is not given (network errors are retried too). */
export const defaultRetryStatuses: readonly number[] = [429, 500, 502, 503, 504];

/** Retry-After waits of one request never add up to more than this. */
export const maxRetryAfterTotalMs = 60_000;

const baseDelayMs = () => Number(process.env.GATEWAY_RETRY_BASE_MS ?? 250);
const maxDelayMs = 8_000;

export interface FailedAttempt {
  status: number;
  network: boolean;
  headers: Record<string, string>;
}

export function shouldRetry(retry: RetrySettings, failure: FailedAttempt): boolean {
  if (retry.on_status_codes) return retry.on_status_codes.includes(failure.status);
  return failure.network || defaultRetryStatuses.includes(failure.status);
}

/**
 * How long to wait before retry number `retryNumber` (1-based): the provider's Retry-After when
 * asked to honour it, else exponential backoff with full jitter.
 */
export function retryDelayMs(retry: RetrySettings, retryNumber: number, failure: FailedAttempt, now = Date.now()): number {
  if (retry.use_retry_after_headers) {
    const hinted = retryAfterMs(failure.headers, now);
    if (hinted !== undefined) return hinted;
  }
  const ceiling = Math.min(maxDelayMs, baseDelayMs() * 2 ** (retryNumber - 1));
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** `retry-after-ms` (milliseconds), else `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers['retry-after']?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
