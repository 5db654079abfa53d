/**
 * How the workers follow work that runs at a provider (a provider's batch, a fine-tuning job): a
 * delayed queue message per look, the first after `GATEWAY_BATCH_FOLLOW_SECONDS` (30 s), each later
 * one twice as long, up to SQS's 15 minutes; and how long a provider may fail to answer before the
 * work fails (`GATEWAY_BATCH_PROVIDER_SILENCE_SECONDS`, 6 hours).
 */

export function firstFollowSeconds(): number {
  const configured = Number(process.env.GATEWAY_BATCH_FOLLOW_SECONDS);
  return Number.isFinite(configured) && configured > 0 ? configured : 30;
}

export const followDelay = (follows: number) => Math.min(900, firstFollowSeconds() * 2 ** Math.min(follows, 10));

export function providerSilenceLimitSeconds(): number {
  const configured = Number(process.env.GATEWAY_BATCH_PROVIDER_SILENCE_SECONDS);
  return Number.isFinite(configured) && configured > 0 ? configured : 6 * 60 * 60;
}
