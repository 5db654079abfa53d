/**
 * The Lambda model the sizes come from. Lambda gives a function CPU in proportion to its memory:
 * 1,769 MB is one full vCPU, half of that half a vCPU, and so on (AWS Lambda Developer Guide,
 * "Configuring Lambda function memory"). A single-threaded Node.js handler gets nothing from more
 * than one vCPU, so CPU time measured here on one core becomes, at a size of S MB,
 * CPU × max(1, 1769 / S) of wall time. That assumes one Graviton vCPU runs the code as fast as one
 * core of the measuring machine; the method is in docs/sizing.md.
 */
import { PRICES, type Prices } from './prices';

export const CANDIDATE_SIZES = [128, 256, 512, 768, 1024, 1536, 1769, 2048, 3008] as const;

/** Memory at which a function gets one full vCPU. */
export const FULL_VCPU_MB = 1769;

/** Modelled cold init (module load to handler ready) must stay within this. */
export const COLD_INIT_LIMIT_MS = 250;

/** Peak RSS must leave this share of the memory size free (the runtime's own memory, GC headroom). */
export const RSS_HEADROOM = 0.8;

/** How much slower than one full vCPU the code runs at this memory size. */
export function cpuFactor(memoryMb: number): number {
  return Math.max(1, FULL_VCPU_MB / memoryMb);
}

/** Wall time of work that takes `cpuMs` on one full vCPU, at this memory size, plus waiting. */
export function modelledDurationMs(cpuMs: number, memoryMb: number, waitMs = 0): number {
  return cpuMs * cpuFactor(memoryMb) + waitMs;
}

/**
 * Lambda's cost of a million invocations that each last `durationMs` at `memoryMb`: duration is
 * billed per GB-second, rounded up to the millisecond per invocation, plus the request charge.
 */
export function lambdaCostPerMillion(durationMs: number, memoryMb: number, prices: Prices = PRICES): { duration: number; requests: number } {
  const billedSeconds = Math.ceil(durationMs) / 1000;
  return { duration: 1e6 * billedSeconds * (memoryMb / 1024) * prices.lambdaArmGbSecond, requests: 1e6 * prices.lambdaRequest };
}

/** What one function is measured to need, in the units the model takes. */
export interface FunctionNeeds {
  /** CPU from module load to handler ready, ms. */
  coldInitCpuMs: number;
  /** Warm CPU per request the latency target is checked with, ms (the mean of the warm requests). */
  addedLatencyCpuMs: number;
  /** The added-latency target per request, ms; undefined when the function has none (queue workers). */
  latencyTargetMs?: number;
  /** Peak RSS of the process under load, MB. */
  peakRssMb: number;
}

export interface SizeChoice {
  memoryMb: number;
  /** True when the size meets every target; false when none does and the size is the fallback. */
  withinTargets: boolean;
  modelledColdInitMs: number;
  modelledAddedLatencyMs: number;
}

/** Whether `memoryMb` meets the cold-init limit, the latency target and the memory headroom. */
export function meetsTargets(needs: FunctionNeeds, memoryMb: number): boolean {
  const factor = cpuFactor(memoryMb);
  if (needs.coldInitCpuMs * factor > COLD_INIT_LIMIT_MS) return false;
  if (needs.latencyTargetMs !== undefined && needs.addedLatencyCpuMs * factor > needs.latencyTargetMs) return false;
  return needs.peakRssMb <= memoryMb * RSS_HEADROOM;
}

/**
 * The smallest candidate size within the targets. When none is, the smallest size that still fits
 * the memory and gives a full vCPU (more memory would not make a single-threaded handler faster),
 * marked as not within the targets.
 */
export function chooseSize(needs: FunctionNeeds, sizes: readonly number[] = CANDIDATE_SIZES): SizeChoice {
  const within = sizes.find((size) => meetsTargets(needs, size));
  const memoryMb = within ?? sizes.find((size) => size >= FULL_VCPU_MB && needs.peakRssMb <= size * RSS_HEADROOM) ?? sizes[sizes.length - 1] ?? FULL_VCPU_MB;
  const factor = cpuFactor(memoryMb);
  return {
    memoryMb,
    withinTargets: within !== undefined,
    modelledColdInitMs: needs.coldInitCpuMs * factor,
    modelledAddedLatencyMs: needs.addedLatencyCpuMs * factor,
  };
}

/** One row of the per-size table: modelled duration and cost at one memory size. */
export interface SizeRow {
  memoryMb: number;
  durationMs: number;
  costPerMillion: number;
  durationWithWaitMs: number;
  costWithWaitPerMillion: number;
}

/** Duration and Lambda cost per million at every candidate size, without and with a provider wait. */
export function sizeTable(warmCpuMs: number, waitMs: number, sizes: readonly number[] = CANDIDATE_SIZES, prices: Prices = PRICES): SizeRow[] {
  return sizes.map((memoryMb) => {
    const durationMs = modelledDurationMs(warmCpuMs, memoryMb);
    const durationWithWaitMs = modelledDurationMs(warmCpuMs, memoryMb, waitMs);
    const total = (ms: number) => {
      const cost = lambdaCostPerMillion(ms, memoryMb, prices);
      return cost.duration + cost.requests;
    };
    return { memoryMb, durationMs, costPerMillion: total(durationMs), durationWithWaitMs, costWithWaitPerMillion: total(durationWithWaitMs) };
  });
}
