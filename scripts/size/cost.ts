/**
 * Cost per million requests of a route family, from what one request was measured to use, and the
 * monthly volume above which two always-on containers behind a load balancer would cost less.
 */
import { lambdaCostPerMillion, modelledDurationMs } from './model';
import { HOURS_PER_MONTH, PRICES, type Prices } from './prices';

/** What one request of a family uses, as measured (counts are per request, may be fractional). */
export interface RequestUsage {
  /** Warm CPU per invocation on one full vCPU, ms. */
  cpuMs: number;
  /** Time an invocation spends waiting (billed as duration), ms. */
  waitMs: number;
  memoryMb: number;
  /** Behind API Gateway (false for log ingestion, which CloudWatch Logs invokes). */
  apiGateway: boolean;
  readRequestUnits: number;
  writeRequestUnits: number;
  /** Bytes of log lines written per request (ingested by CloudWatch Logs). */
  logBytes: number;
  sqsRequests: number;
  s3Writes: number;
  s3Reads: number;
  kmsRequests: number;
  /** Lambda invocations per request (below 1 when one invocation handles several: log records). */
  invocationsPerRequest?: number;
}

export interface CostBreakdown {
  lambdaDuration: number;
  lambdaRequests: number;
  apiGateway: number;
  dynamoReads: number;
  dynamoWrites: number;
  logs: number;
  sqs: number;
  s3: number;
  kms: number;
  total: number;
}

export function costPerMillion(usage: RequestUsage, prices: Prices = PRICES): CostBreakdown {
  const lambda = lambdaCostPerMillion(modelledDurationMs(usage.cpuMs, usage.memoryMb, usage.waitMs), usage.memoryMb, prices);
  const million = 1e6;
  const invocations = usage.invocationsPerRequest ?? 1;
  const parts = {
    lambdaDuration: lambda.duration * invocations,
    lambdaRequests: lambda.requests * invocations,
    apiGateway: usage.apiGateway ? million * prices.apiGatewayRestRequest : 0,
    dynamoReads: million * usage.readRequestUnits * prices.dynamoReadRequestUnit,
    dynamoWrites: million * usage.writeRequestUnits * prices.dynamoWriteRequestUnit,
    logs: (million * usage.logBytes * prices.logsIngestionGb) / 2 ** 30,
    sqs: million * usage.sqsRequests * prices.sqsRequest,
    s3: million * (usage.s3Writes * prices.s3WriteRequest + usage.s3Reads * prices.s3ReadRequest),
    kms: million * usage.kmsRequests * prices.kmsRequest,
  };
  const total = Object.values(parts).reduce((sum, value) => sum + value, 0);
  return { ...parts, total };
}

/** Two always-on container tasks behind a load balancer, the alternative the break-even is against. */
export interface ContainerAssumption {
  tasks: number;
  vcpuPerTask: number;
  gbPerTask: number;
  /** Requests per second one LCU covers (an ALB LCU is 25 new connections a second). */
  requestsPerLcuSecond: number;
}

export const TWO_CONTAINERS: ContainerAssumption = { tasks: 2, vcpuPerTask: 1, gbPerTask: 2, requestsPerLcuSecond: 25 };

/** The monthly cost that does not depend on volume: the tasks and the load balancer's hours. */
export function containerFixedMonthly(assumption: ContainerAssumption = TWO_CONTAINERS, prices: Prices = PRICES): number {
  const task = assumption.vcpuPerTask * prices.fargateArmVcpuHour + assumption.gbPerTask * prices.fargateArmGbHour;
  return (assumption.tasks * task + prices.albHour) * HOURS_PER_MONTH;
}

/** The load balancer's LCU cost of one request, when every request is a new connection. */
export function containerPerRequest(assumption: ContainerAssumption = TWO_CONTAINERS, prices: Prices = PRICES): number {
  return prices.albLcuHour / (assumption.requestsPerLcuSecond * 3600);
}

/**
 * Requests a month above which the containers cost less than Lambda and API Gateway do: the
 * per-request serverless cost (Lambda and API Gateway; what both setups pay alike, DynamoDB, logs,
 * queues, is left out) against the containers' fixed cost plus their per-request LCU cost.
 * Infinity when the serverless request is no dearer than the container's.
 */
export function breakEvenMonthlyRequests(serverlessPerMillion: number, assumption: ContainerAssumption = TWO_CONTAINERS, prices: Prices = PRICES): number {
  const perRequest = serverlessPerMillion / 1e6 - containerPerRequest(assumption, prices);
  if (perRequest <= 0) return Number.POSITIVE_INFINITY;
  return containerFixedMonthly(assumption, prices) / perRequest;
}

/** Requests a month the containers' vCPUs can serve at all, at `cpuMs` of CPU per request. */
export function containerCapacityMonthly(cpuMs: number, assumption: ContainerAssumption = TWO_CONTAINERS): number {
  return (assumption.tasks * assumption.vcpuPerTask * HOURS_PER_MONTH * 3600 * 1000) / cpuMs;
}
