/**
 * Applying policies to one request or one target attempt: which policies select it, which bucket
 * it falls in, whether the bucket's window has room, and the `x-ratelimit-*` headers that say so.
 */
import { sha256Hex } from '../core/sha256';
import { GatewayError } from '../core/errors';
import { tokenCounter, type CounterSlot } from '../store/rate-counters';
import type { CounterStore } from '../store/counters';
import type { Reservation } from '../store/reserved-counters';
import { admitRequest } from './limiter';
import { metadataPrefix, windowMs, type ActivePolicy } from './policies';

/** A request's value for a condition or group key; undefined when the request has none. */
export type ValueOf = (key: string) => string | undefined;

/** Values read from `metadata` are strings; numbers and booleans match as their text. */
export function metadataValue(metadata: Record<string, unknown>, key: string): string | undefined {
  const value = metadata[key.slice(metadataPrefix.length)];
  return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}

/** Whether every condition of a policy (a rate limit or a budget) holds for the request. */
export function selects(policy: Pick<ActivePolicy, 'conditions'>, valueOf: ValueOf): boolean {
  for (const condition of policy.conditions) {
    const value = valueOf(condition.key);
    if (value === undefined) return false;
    const wanted = condition.value;
    if (Array.isArray(wanted) ? !wanted.includes(value) && !wanted.includes('*') : wanted !== '*' && wanted !== value) return false;
  }
  return true;
}

/**
 * The counter of the policy's bucket for this request in the current window. A request without a
 * value for a group key shares the bucket of all such requests: leaving a key out must not escape
 * the limit.
 */
export function slotOf(policy: ActivePolicy, valueOf: ValueOf, now: number): CounterSlot {
  const size = windowMs[policy.unit];
  const windowStart = Math.floor(now / size) * size;
  return { policyId: policy.id, bucket: bucketOf(policy.groupKeys, valueOf), windowStart, windowEnd: windowStart + size };
}

/** The bucket of a request: a hash of its values for the group keys (a missing value is null). */
export function bucketOf(groupKeys: readonly string[], valueOf: ValueOf): string {
  return sha256Hex(JSON.stringify(groupKeys.map((key) => valueOf(key) ?? null))).slice(0, 32);
}

/** What one policy said about a request: the figures its headers carry. */
export interface Verdict {
  policy: ActivePolicy;
  remaining: number;
  windowEnd: number;
}

/** What the policies of one request found, gathered by the request step and every target attempt. */
export interface RateLimitState {
  /** The workspace's policies of target attempts (provider, model, config, virtual_key). */
  targetPolicies: readonly ActivePolicy[];
  /** The tightest policy of each type: the one whose headers the answer carries. */
  tightest: { requests?: Verdict; tokens?: Verdict };
  /** Token reservations of the request's own policies. */
  requestTokens: TokenReservation[];
  /** Token reservations of the last target attempt (the one whose answer the client gets). */
  targetTokens: TokenReservation[];
}

/** What a request reserved on a token policy's window, settled with its tokens once it is answered. */
export interface TokenReservation {
  slot: CounterSlot;
  reservation: Reservation;
}

export function newRateLimitState(targetPolicies: readonly ActivePolicy[]): RateLimitState {
  return { targetPolicies, tightest: {}, requestTokens: [], targetTokens: [] };
}

/**
 * Checks every policy that selects the request: token policies by reserving the request's
 * estimated tokens on their window while its total (reservations under way included) is below the
 * limit, request policies by taking a request from their window. Answers the token reservations to
 * settle after the answer; throws the 429 of the first policy that refuses. A request refused by
 * one policy still counts against the request policies taken before it; its token reservations
 * are released.
 */
export async function enforce(
  counters: CounterStore,
  policies: readonly ActivePolicy[],
  valueOf: ValueOf,
  state: RateLimitState,
  tokens = 0,
  now = Date.now(),
): Promise<TokenReservation[]> {
  const reserved: TokenReservation[] = [];
  const selected = policies.filter((policy) => selects(policy, valueOf));
  // Token policies first: a refused reservation is released, whereas a taken request stays taken.
  // Their windows are claimed at once; the first policy in order that refuses answers.
  const tokenPolicies = selected.filter((policy) => policy.type === 'tokens').map((policy) => ({ policy, slot: slotOf(policy, valueOf, now) }));
  const claims = await Promise.allSettled(tokenPolicies.map(({ policy, slot }) => counters.claim(tokenCounter(slot), tokens, policy.value, now)));
  let refusal: unknown;
  claims.forEach((result, index) => {
    const { policy, slot } = tokenPolicies[index]!;
    if (result.status === 'rejected') return void (refusal ??= result.reason);
    // What the window had left when the request was admitted: its own reservation is not spent yet.
    const counted = result.value.admitted ? result.value.total - result.value.reservation.amount : result.value.total;
    const verdict = { policy, remaining: Math.max(0, policy.value - counted), windowEnd: slot.windowEnd };
    if (!result.value.admitted) return void (refusal ??= rateLimited(verdict, now));
    keepTightest(state, verdict);
    reserved.push({ slot, reservation: result.value.reservation });
  });
  if (refusal) {
    await releaseTokens(counters, reserved);
    throw refusal;
  }
  for (const policy of selected) {
    if (policy.type !== 'requests') continue;
    const slot = slotOf(policy, valueOf, now);
    const admission = await admitRequest(slot, policy.value, counters);
    const verdict = { policy, remaining: admission.remaining, windowEnd: slot.windowEnd };
    if (!admission.admitted) {
      await releaseTokens(counters, reserved);
      throw rateLimited(verdict, now);
    }
    keepTightest(state, verdict);
  }
  return reserved;
}

function keepTightest(state: RateLimitState, verdict: Verdict): void {
  const known = state.tightest[verdict.policy.type];
  if (!known || verdict.remaining < known.remaining) state.tightest[verdict.policy.type] = verdict;
}

/** A refusal: the 429 names the policy, and `policyId` lets the log keep it. */
export class RateLimitedError extends GatewayError {
  constructor(
    message: string,
    headers: Record<string, string>,
    readonly policyId: string,
  ) {
    super(429, message, { code: 'rate_limit_exceeded', headers });
  }
}

export function rateLimited(verdict: Verdict, now: number): RateLimitedError {
  const { policy } = verdict;
  const per = { rpm: 'minute', rph: 'hour', rpd: 'day' }[policy.unit];
  const seconds = Math.max(1, Math.ceil((verdict.windowEnd - now) / 1000));
  return new RateLimitedError(
    `Rate limit reached: policy ${policy.id} allows ${policy.value} ${policy.type} per ${per}. Try again in ${seconds} s.`,
    { ...headersOf(verdict, now), 'retry-after': String(seconds) },
    policy.id,
  );
}

/** `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` of one verdict. */
export function headersOf(verdict: Verdict, now: number): Record<string, string> {
  const suffix = verdict.policy.type;
  return {
    [`x-ratelimit-limit-${suffix}`]: String(verdict.policy.value),
    [`x-ratelimit-remaining-${suffix}`]: String(verdict.remaining),
    [`x-ratelimit-reset-${suffix}`]: duration(verdict.windowEnd - now),
  };
}

/** The headers of the tightest policies, for an answer that went through. */
export function answerHeaders(state: RateLimitState, now = Date.now()): Record<string, string> | undefined {
  const { requests, tokens } = state.tightest;
  if (!requests && !tokens) return undefined;
  return { ...(requests && headersOf(requests, now)), ...(tokens && headersOf(tokens, now)) };
}

/** OpenAI's form of a reset time: `59s`, `6m0s`, `1h2m3s`. */
export function duration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** Settles each reservation with the answer's tokens: the window keeps those and lets the rest of the reservation go. */
export function countTokens(counters: CounterStore, reserved: readonly TokenReservation[], tokens: number): Promise<unknown> {
  return Promise.all(
    reserved.map(({ slot, reservation }) =>
      reservation.amount === 0 && tokens <= 0 ? undefined : counters.settle(tokenCounter(slot), reservation, Math.max(0, tokens)),
    ),
  );
}

/** Lets reservations go unused (a refused request, an attempt a fallback replaced). */
export function releaseTokens(counters: CounterStore, reserved: readonly TokenReservation[]): Promise<unknown> {
  return countTokens(counters, reserved, 0);
}
