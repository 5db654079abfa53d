import { describe, expect, it } from 'vitest';
import {
  breakEvenMonthlyRequests,
  containerCapacityMonthly,
  containerFixedMonthly,
  containerPerRequest,
  costPerMillion,
  type RequestUsage,
} from '../../../scripts/size/cost';
import { PRICES } from '../../../scripts/size/prices';

const usage: RequestUsage = {
  cpuMs: 0.5,
  waitMs: 0,
  memoryMb: 1024,
  apiGateway: true,
  readRequestUnits: 0,
  writeRequestUnits: 0,
  logBytes: 0,
  sqsRequests: 0,
  s3Writes: 0,
  s3Reads: 0,
  kmsRequests: 0,
};

describe('cost per million requests', () => {
  it('adds each service at its price', () => {
    const cost = costPerMillion({
      ...usage,
      readRequestUnits: 2,
      writeRequestUnits: 1,
      logBytes: 1024,
      sqsRequests: 1,
      s3Writes: 1,
      s3Reads: 2,
      kmsRequests: 1,
    });
    expect(cost.apiGateway).toBeCloseTo(3.5);
    expect(cost.lambdaRequests).toBeCloseTo(0.2);
    // 0.5 ms × 1769/1024 = 0.86 ms, billed as 1 ms of 1 GB.
    expect(cost.lambdaDuration).toBeCloseTo(1e6 * 0.001 * PRICES.lambdaArmGbSecond, 8);
    expect(cost.dynamoReads).toBeCloseTo(0.25);
    expect(cost.dynamoWrites).toBeCloseTo(0.625);
    expect(cost.logs).toBeCloseTo((1e6 * 1024 * 0.5) / 2 ** 30);
    expect(cost.sqs).toBeCloseTo(0.4);
    expect(cost.s3).toBeCloseTo(5 + 0.8);
    expect(cost.kms).toBeCloseTo(3);
    const sum = cost.lambdaDuration + cost.lambdaRequests + cost.apiGateway + cost.dynamoReads + cost.dynamoWrites + cost.logs + cost.sqs + cost.s3 + cost.kms;
    expect(cost.total).toBeCloseTo(sum, 10);
  });

  it('bills the provider wait as duration, and no API Gateway where it does not stand in front', () => {
    const waiting = costPerMillion({ ...usage, waitMs: 1500 });
    expect(waiting.lambdaDuration).toBeCloseTo(1e6 * 1.501 * PRICES.lambdaArmGbSecond, 6);
    expect(costPerMillion({ ...usage, apiGateway: false }).apiGateway).toBe(0);
  });

  it('shares an invocation among the requests it handles', () => {
    const batched = costPerMillion({ ...usage, apiGateway: false, invocationsPerRequest: 1 / 25 });
    expect(batched.lambdaRequests).toBeCloseTo(0.2 / 25);
  });
});

describe('containers instead', () => {
  it('cost two tasks and a load balancer a month, LCUs per request', () => {
    const task = PRICES.fargateArmVcpuHour + 2 * PRICES.fargateArmGbHour;
    expect(containerFixedMonthly()).toBeCloseTo((2 * task + PRICES.albHour) * 730);
    expect(containerPerRequest()).toBeCloseTo(PRICES.albLcuHour / (25 * 3600));
  });

  it('are cheaper above the volume where the serverless per-request cost covers their fixed cost', () => {
    const perMillion = 40;
    const volume = breakEvenMonthlyRequests(perMillion);
    expect(volume * (perMillion / 1e6 - containerPerRequest())).toBeCloseTo(containerFixedMonthly(), 6);
    expect(breakEvenMonthlyRequests(0)).toBe(Number.POSITIVE_INFINITY);
  });

  it('serve at most what two vCPUs compute in a month', () => {
    expect(containerCapacityMonthly(1)).toBeCloseTo(2 * 730 * 3600 * 1000);
  });
});
