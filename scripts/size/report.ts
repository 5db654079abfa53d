/**
 * From the measurements to what the run prints and writes: the per-function sizing (the smallest
 * size within the targets), the per-size model of the inference functions, and the cost table.
 */
import { breakEvenMonthlyRequests, containerCapacityMonthly, containerFixedMonthly, costPerMillion, TWO_CONTAINERS, type RequestUsage } from './cost';
import type { MeasuredFunction } from './measure';
import { CANDIDATE_SIZES, chooseSize, cpuFactor, COLD_INIT_LIMIT_MS, sizeTable, type SizeChoice } from './model';
import { PRICES } from './prices';
import { LOG_BATCH, PROVIDER_WAIT_MS } from './scenarios';

export const RSS_LIMIT_MB = 150;

export interface Sized {
  functionName: string;
  measured: MeasuredFunction[];
  choice: SizeChoice;
  coldInitCpuMs: number;
  warmCpuMs: number;
  latencyCpuMs: number;
  peakRssMb: number;
}

/** Sizes each function from all its measurements (the most demanding of each). */
export function sizeFunctions(results: readonly MeasuredFunction[]): Sized[] {
  const byFunction = new Map<string, MeasuredFunction[]>();
  for (const result of results) byFunction.set(result.measurement.functionName, [...(byFunction.get(result.measurement.functionName) ?? []), result]);
  return [...byFunction].map(([functionName, measured]) => {
    const coldInitCpuMs = Math.max(...measured.map((m) => m.coldInit.cpuMs));
    const latencyCpuMs = Math.max(...measured.map((m) => m.warm.cpuP99Ms));
    const warmCpuMs = Math.max(...measured.map((m) => m.warm.cpuMeanMs));
    const peakRssMb = Math.max(...measured.map((m) => m.peakRssMb));
    const targets = measured.map((m) => m.measurement.latencyTargetMs).filter((t): t is number => t !== undefined);
    const choice = chooseSize({
      coldInitCpuMs,
      addedLatencyCpuMs: warmCpuMs,
      latencyTargetMs: targets.length ? Math.min(...targets) : undefined,
      peakRssMb,
    });
    return { functionName, measured, choice, coldInitCpuMs, warmCpuMs, latencyCpuMs, peakRssMb };
  });
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
const us = (valueMs: number) => `${Math.round(valueMs * 1000)}`;
const dollars = (value: number) => (value === 0 ? '–' : value < 0.005 ? '< $0.01' : `$${value.toFixed(2)}`);

function table(header: string[], rows: string[][]): string {
  // At least three wide, as Markdown formatters write a table's rule.
  const widths = header.map((cell, i) => Math.max(3, cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`, ...rows.map(line)].join('\n');
}

/** One row per measurement: what was measured, and the size chosen for its function. */
export function measurementTable(sized: readonly Sized[]): string {
  const rows: string[][] = [];
  for (const entry of sized) {
    for (const m of entry.measured) {
      const failures = Object.entries(m.warm.failures)
        .map(([status, count]) => `${count}×${status}`)
        .join(' ');
      rows.push([
        m.measurement.label,
        `${ms(m.coldInit.cpuMs)} / ${ms(m.coldInit.wallMs)}`,
        `${m.first.status} ${ms(m.first.cpuMs)} / ${ms(m.first.wallMs)}`,
        `${us(m.warm.cpuMeanMs)} / ${us(m.warm.cpuP99Ms)}`,
        ms(m.warm.wallP50Ms),
        `${m.peakRssMb.toFixed(0)}${m.peakRssMb <= RSS_LIMIT_MB ? ' ✓' : ' ✗'}`,
        m.logBytes.toFixed(0),
        m.perRequest.readUnits.toFixed(2),
        m.perRequest.writeUnits.toFixed(2),
        `${entry.choice.memoryMb}${entry.choice.withinTargets ? '' : ' (!)'}`,
        `${ms(entry.choice.modelledColdInitMs)} / ${ms(m.warm.cpuMeanMs * cpuFactor(entry.choice.memoryMb))} / ${ms(m.warm.cpuP99Ms * cpuFactor(entry.choice.memoryMb))}`,
        `${m.warm.requests}${failures ? ` (${failures})` : ''}`,
      ]);
    }
  }
  return table(
    [
      'function',
      'cold init ms CPU / wall',
      'first req: status ms CPU / wall',
      'warm µs CPU mean / p99',
      'warm wall p50 ms',
      'peak RSS MB',
      'log B/req',
      'RRU/req',
      'WRU/req',
      'size MB',
      'at size: init / added mean / p99 ms',
      'warm requests',
    ],
    rows,
  );
}

/** Modelled duration and Lambda cost per million at every size, for the inference measurements. */
export function perSizeTable(results: readonly MeasuredFunction[]): string {
  const inference = results.filter((m) => m.measurement.family === 'inference');
  const rows: string[][] = [];
  for (const m of inference) {
    const perSize = sizeTable(m.warm.cpuMeanMs, m.measurement.waitMs);
    rows.push([
      m.measurement.label,
      ...perSize.map(
        (row) => `${ms(row.durationMs)} ms ${dollars(row.costPerMillion)} / ${ms(row.durationWithWaitMs)} ms ${dollars(row.costWithWaitPerMillion)}`,
      ),
    ]);
  }
  return table(['function (without / with provider wait)', ...CANDIDATE_SIZES.map(String)], rows);
}

/** The usage of one request of a measurement at its function's chosen size. */
export function usageOf(m: MeasuredFunction, memoryMb: number): RequestUsage {
  const per = m.measurement.requestsPerInvocation ?? 1;
  return {
    cpuMs: m.warm.cpuMeanMs,
    waitMs: m.measurement.waitMs,
    memoryMb,
    apiGateway: m.measurement.request.kind === 'http',
    readRequestUnits: m.perRequest.readUnits / per,
    writeRequestUnits: m.perRequest.writeUnits / per,
    logBytes: m.logBytes / per,
    sqsRequests: m.perRequest.sqsRequests / per,
    s3Writes: m.perRequest.s3Writes / per,
    s3Reads: m.perRequest.s3Reads / per,
    kmsRequests: 0,
    invocationsPerRequest: 1 / per,
  };
}

function averageUsage(usages: readonly RequestUsage[]): RequestUsage {
  const avg = (pick: (u: RequestUsage) => number) => usages.reduce((sum, u) => sum + pick(u), 0) / usages.length;
  return {
    cpuMs: avg((u) => u.cpuMs),
    waitMs: avg((u) => u.waitMs),
    memoryMb: avg((u) => u.memoryMb),
    apiGateway: usages.every((u) => u.apiGateway),
    readRequestUnits: avg((u) => u.readRequestUnits),
    writeRequestUnits: avg((u) => u.writeRequestUnits),
    logBytes: avg((u) => u.logBytes),
    sqsRequests: avg((u) => u.sqsRequests),
    s3Writes: avg((u) => u.s3Writes),
    s3Reads: avg((u) => u.s3Reads),
    kmsRequests: avg((u) => u.kmsRequests),
    invocationsPerRequest: avg((u) => u.invocationsPerRequest ?? 1),
  };
}

export interface CostRow {
  family: string;
  usage: RequestUsage;
}

export function costRows(sized: readonly Sized[]): CostRow[] {
  const sizeOf = new Map(sized.map((entry) => [entry.functionName, entry.choice.memoryMb]));
  const all = sized.flatMap((entry) => entry.measured);
  const find = (label: string) => all.find((m) => m.measurement.label === label);
  const rows: CostRow[] = [];
  const chat = find('chatCompletions');
  const stream = find('chatCompletions (stream)');
  if (chat) rows.push({ family: 'Inference, non-streamed', usage: usageOf(chat, sizeOf.get('chatCompletions') ?? 1024) });
  if (stream) rows.push({ family: 'Inference, streamed', usage: usageOf(stream, sizeOf.get('chatCompletions') ?? 1024) });
  const control = all.filter((m) => m.measurement.family === 'control');
  if (control.length)
    rows.push({
      family: 'Control (mean of the list routes)',
      usage: averageUsage(control.map((m) => usageOf(m, sizeOf.get(m.measurement.functionName) ?? 1024))),
    });
  const ingest = find(`logIngest (${LOG_BATCH} records)`) ?? find('logIngest');
  if (ingest)
    rows.push({
      family: `Log ingest (per record, ${ingest.measurement.requestsPerInvocation ?? 1} a delivery)`,
      usage: usageOf(ingest, sizeOf.get('logIngest') ?? 1024),
    });
  return rows;
}

const perMonth = (requests: number) =>
  !Number.isFinite(requests) ? 'never' : requests >= 1e9 ? `${(requests / 1e9).toFixed(1)} billion` : `${(requests / 1e6).toFixed(0)} million`;

/** The README's cost table (Markdown), with the assumptions it rests on. */
export function costMarkdown(rows: readonly CostRow[], generated: { quick: boolean; requests: number }): string {
  const body = rows.map(({ family, usage }) => {
    const cost = costPerMillion(usage);
    return [
      family,
      dollars(cost.lambdaDuration),
      dollars(cost.lambdaRequests),
      dollars(cost.apiGateway),
      dollars(cost.dynamoReads),
      dollars(cost.dynamoWrites),
      dollars(cost.logs),
      dollars(cost.sqs),
      dollars(cost.s3),
      dollars(cost.kms),
      `**${dollars(cost.total)}**`,
    ];
  });
  const header = [
    'Per million requests',
    'Lambda duration',
    'Lambda requests',
    'API Gateway',
    'DynamoDB reads',
    'DynamoDB writes',
    'CloudWatch Logs',
    'SQS',
    'S3',
    'KMS',
    'Total',
  ];
  const counted = rows
    .map(
      ({ family, usage }) =>
        `${family}: ${usage.memoryMb.toFixed(0)} MB, ${(usage.cpuMs * (usage.invocationsPerRequest ?? 1) * 1000).toFixed(0)} µs CPU${usage.waitMs ? ` + ${usage.waitMs} ms provider wait` : ''}, ` +
        `${usage.readRequestUnits.toFixed(2)} RRU, ${usage.writeRequestUnits.toFixed(2)} WRU, ${usage.logBytes.toFixed(0)} log bytes per request.`,
    )
    .map((line) => `- ${line}`);
  const inference = rows.find((row) => row.family.startsWith('Inference, non-streamed'));
  let breakEven = '';
  if (inference) {
    const cost = costPerMillion(inference.usage);
    const serverless = cost.lambdaDuration + cost.lambdaRequests + cost.apiGateway;
    const volume = breakEvenMonthlyRequests(serverless);
    const capacity = containerCapacityMonthly(inference.usage.cpuMs);
    breakEven =
      `Two always-on containers would be cheaper above about **${perMonth(volume)} inference requests a month**: two Fargate Linux/ARM tasks of ` +
      `${TWO_CONTAINERS.vcpuPerTask} vCPU and ${TWO_CONTAINERS.gbPerTask} GB ($${PRICES.fargateArmVcpuHour}/vCPU-h, $${PRICES.fargateArmGbHour}/GB-h) behind an ` +
      `Application Load Balancer ($${PRICES.albHour}/h, $${PRICES.albLcuHour}/LCU-h, one LCU per ${TWO_CONTAINERS.requestsPerLcuSecond} new connections a second) cost ` +
      `$${containerFixedMonthly().toFixed(2)} a month before LCUs, against $${serverless.toFixed(2)} per million for Lambda and API Gateway ` +
      `(DynamoDB, logs and queues cost the same either way). At ${(inference.usage.cpuMs * 1000).toFixed(0)} µs of CPU a request, two vCPUs serve at most ` +
      `${perMonth(capacity)} requests a month.`;
  }
  return [
    `Prices: ${PRICES.region}, on-demand, checked ${PRICES.checked} (scripts/size/prices.ts names the pages). Generated by \`npm run size${generated.quick ? ' -- --quick' : ''}\` ` +
      `(${generated.requests.toLocaleString('en-US')} warm requests per function).`,
    '',
    table(header, body),
    '',
    'What each row is made of (measured; read and write units counted at the DynamoDB endpoint):',
    '',
    ...counted,
    '',
    `Inference is billed for the provider's answer too (modelled as ${PROVIDER_WAIT_MS} ms): that wait is most of its Lambda duration. ` +
      `Each inference request also writes one request-log record, which log ingestion stores: add the log-ingest row. CloudWatch Logs delivers ` +
      `records in batches; the row assumes ${LOG_BATCH} a delivery of one model and key (records that share them share rollup updates; one record a ` +
      `delivery costs more, see docs/sizing.md). KMS: no request above calls KMS (the provider key comes with the request); a stored ` +
      `provider key is opened with KMS Decrypt ($${(PRICES.kmsRequest * 10_000).toFixed(2)} per 10,000) when a container first needs it, and again when its short cache time ends.`,
    '',
    `Idle: $${PRICES.kmsKeyMonth.toFixed(2)} a month (the KMS key); Lambda, API Gateway, DynamoDB on-demand and SQS cost nothing without requests ` +
      '(storage of logs and tables aside).',
    '',
    breakEven,
  ].join('\n');
}

/** The serverless.yml comment of a function's size. */
export function sizeComment(entry: Sized): string {
  const verdict = entry.choice.withinTargets ? 'smallest size within targets' : 'no size within targets; the first with a full vCPU';
  return (
    `npm run size: cold init ${entry.coldInitCpuMs.toFixed(0)} ms CPU, ${Math.round(entry.warmCpuMs * 1000)} µs/invocation ` +
    `(p99 ${Math.round(entry.latencyCpuMs * 1000)} µs), peak RSS ${entry.peakRssMb.toFixed(0)} MB; ${verdict}`
  );
}

export const COLD_INIT_NOTE = `cold init ≤ ${COLD_INIT_LIMIT_MS} ms modelled`;
