import { describe, expect, it } from 'vitest';
import { chooseSize, cpuFactor, lambdaCostPerMillion, meetsTargets, modelledDurationMs, sizeTable } from '../../../scripts/size/model';
import { PRICES } from '../../../scripts/size/prices';

describe('size model', () => {
  it('gives one full vCPU at 1,769 MB and a proportional share below it', () => {
    expect(cpuFactor(1769)).toBe(1);
    expect(cpuFactor(3008)).toBe(1);
    expect(cpuFactor(1769 / 2)).toBeCloseTo(2);
    expect(cpuFactor(128)).toBeCloseTo(13.82, 2);
    expect(modelledDurationMs(1, 512)).toBeCloseTo(1769 / 512);
    expect(modelledDurationMs(1, 512, 1500)).toBeCloseTo(1500 + 1769 / 512);
  });

  it('bills duration per GB-second rounded up to the millisecond, plus the request charge', () => {
    // 1.2 ms at 1,024 MB bills 2 ms of 1 GB a million times.
    const cost = lambdaCostPerMillion(1.2, 1024);
    expect(cost.duration).toBeCloseTo(1e6 * 0.002 * PRICES.lambdaArmGbSecond, 10);
    expect(cost.requests).toBeCloseTo(0.2, 10);
    // 1.5 s at 512 MB: 0.75 GB-s a request.
    expect(lambdaCostPerMillion(1500, 512).duration).toBeCloseTo(1e6 * 0.75 * PRICES.lambdaArmGbSecond, 6);
  });

  it('chooses the smallest size within the cold-init limit, the latency target and the memory headroom', () => {
    // 40 ms of init: 250 / 40 = 6.25, so at least 1769 / 6.25 = 283 MB; 0.5 ms within 2 ms: at least 443 MB.
    expect(chooseSize({ coldInitCpuMs: 40, addedLatencyCpuMs: 0.5, latencyTargetMs: 2, peakRssMb: 70 })).toMatchObject({ memoryMb: 512, withinTargets: true });
    // Without a latency target the cold init decides.
    expect(chooseSize({ coldInitCpuMs: 40, addedLatencyCpuMs: 5, peakRssMb: 70 }).memoryMb).toBe(512);
    expect(chooseSize({ coldInitCpuMs: 10, addedLatencyCpuMs: 5, peakRssMb: 70 }).memoryMb).toBe(128);
    // Memory: 120 MB of RSS needs more than 128 MB even when the CPU would do.
    expect(chooseSize({ coldInitCpuMs: 1, addedLatencyCpuMs: 0.01, peakRssMb: 120 }).memoryMb).toBe(256);
  });

  it('falls back to the first size with a full vCPU when none meets the targets', () => {
    const choice = chooseSize({ coldInitCpuMs: 40, addedLatencyCpuMs: 3, latencyTargetMs: 2, peakRssMb: 70 });
    expect(choice).toMatchObject({ memoryMb: 1769, withinTargets: false });
    expect(choice.modelledAddedLatencyMs).toBeCloseTo(3);
    expect(meetsTargets({ coldInitCpuMs: 40, addedLatencyCpuMs: 3, latencyTargetMs: 2, peakRssMb: 70 }, 3008)).toBe(false);
  });

  it('tabulates every candidate size with and without the provider wait', () => {
    const rows = sizeTable(1, 1500);
    expect(rows.map((row) => row.memoryMb)).toEqual([128, 256, 512, 768, 1024, 1536, 1769, 2048, 3008]);
    const at1024 = rows.find((row) => row.memoryMb === 1024)!;
    expect(at1024.durationMs).toBeCloseTo(1769 / 1024);
    expect(at1024.durationWithWaitMs).toBeCloseTo(1500 + 1769 / 1024);
    expect(at1024.costWithWaitPerMillion).toBeGreaterThan(at1024.costPerMillion);
    // Above a full vCPU more memory costs more and is no faster.
    expect(rows.at(-1)!.durationMs).toBe(1);
    expect(rows.at(-1)!.costWithWaitPerMillion).toBeGreaterThan(rows.find((row) => row.memoryMb === 1769)!.costWithWaitPerMillion);
  });
});
