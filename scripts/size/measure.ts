/**
 * Runs one measurement: a fresh `node` process for the function's bundle (child.ts), with counting
 * proxies of its own in front of the emulators, and collects its cold init, first request, warm
 * requests, peak RSS, log bytes and the DynamoDB, SQS and S3 calls of its warm requests.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChildReport, ChildSpec } from './child';
import { startCountingProxy, subtractCounts, type Counts, type IndexShape } from './counting-proxy';
import type { Measurement } from './scenarios';

export interface MeasuredFunction {
  measurement: Measurement;
  /** The median of the cold inits measured (this process's and the extra ones). */
  coldInit: { wallMs: number; cpuMs: number; rssMb: number; cpuRunsMs: number[] };
  first: { wallMs: number; cpuMs: number; status: number };
  warm: {
    requests: number;
    cpuMeanMs: number;
    cpuP50Ms: number;
    cpuP99Ms: number;
    wallP50Ms: number;
    wallP99Ms: number;
    /** Answers not 2xx, by status. */
    failures: Record<string, number>;
  };
  peakRssMb: number;
  /** Per warm request. */
  logBytes: number;
  /** The DynamoDB, SQS and S3 use of the warm requests, per request (call counts are totals). */
  perRequest: { readUnits: number; writeUnits: number; estimatedUnits: number; sqsRequests: number; s3Writes: number; s3Reads: number };
  calls: Record<string, number>;
  /** DynamoDB request units of the warm requests by operation (totals). */
  units: Record<string, number>;
  /** A request-log line the function wrote, if it wrote any. */
  requestLogLine?: string;
  firstAnswer: string;
}

/**
 * Cold init alone, in `runs` more fresh processes (each imports the bundle and exits): one import
 * is noisy on a shared machine, and the size rests on it. Returns each run's CPU and wall ms.
 */
export async function measureColdInits(options: {
  measurement: Measurement;
  bundle: string;
  childScript: string;
  memoryMb: number;
  runs: number;
  env: Record<string, string>;
}): Promise<{ cpuMs: number; wallMs: number }[]> {
  const samples: { cpuMs: number; wallMs: number }[] = [];
  for (let run = 0; run < options.runs; run++) {
    const spec: ChildSpec = {
      functionName: options.measurement.functionName,
      bundle: options.bundle,
      memoryMb: options.memoryMb,
      request: options.measurement.request,
      requests: 0,
      coldOnly: true,
    };
    const child = spawn(process.execPath, [options.childScript], {
      env: { ...options.env, AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(options.memoryMb), SIZE_CHILD_SPEC: JSON.stringify(spec) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const report = await new Promise<ChildReport>((resolve, reject) => {
      child.once('message', (message: ChildReport) => {
        resolve(message);
        child.send('go');
      });
      child.once('exit', (code) => reject(new Error(`${options.measurement.label}: the cold-init process ended (exit ${code})\n${stderr.slice(-1500)}`)));
    });
    await new Promise<void>((resolve) => (child.exitCode === null ? child.once('exit', () => resolve()) : resolve()));
    if (report.phase !== 'cold') throw new Error(`${options.measurement.label}: ${report.phase === 'error' ? report.message : 'no cold init reported'}`);
    samples.push({ cpuMs: report.cpuMs, wallMs: report.wallMs });
  }
  return samples;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

export async function measureFunction(options: {
  measurement: Measurement;
  bundle: string;
  childScript: string;
  memoryMb: number;
  requests: number;
  env: Record<string, string>;
  endpoints: { dynamodb: string; sqs: string; s3: string };
  indexes: Record<string, IndexShape[]>;
  workDir: string;
  /** Extra cold-init processes, for the median. */
  coldRuns: number;
}): Promise<MeasuredFunction> {
  const { measurement } = options;
  const coldSamples = await measureColdInits({ ...options, runs: options.coldRuns });
  const proxies = {
    dynamodb: await startCountingProxy('dynamodb', options.endpoints.dynamodb, options.indexes),
    sqs: await startCountingProxy('sqs', options.endpoints.sqs),
    s3: await startCountingProxy('s3', options.endpoints.s3),
  };
  const snapshot = (): Counts[] => [proxies.dynamodb, proxies.sqs, proxies.s3].map((proxy) => structuredClone(proxy.counts));
  const stem = path.join(options.workDir, measurement.label.replace(/\W+/g, '-'));
  const stdoutFile = `${stem}.stdout.log`;
  const stderrFile = `${stem}.stderr.log`;
  const out = openSync(stdoutFile, 'w');
  const err = openSync(stderrFile, 'w');
  const spec: ChildSpec = {
    functionName: measurement.functionName,
    bundle: options.bundle,
    memoryMb: options.memoryMb,
    request: measurement.request,
    requests: options.requests,
  };
  const child = spawn(process.execPath, [options.childScript], {
    env: {
      ...options.env,
      GATEWAY_DYNAMODB_ENDPOINT: proxies.dynamodb.url,
      GATEWAY_SQS_ENDPOINT: proxies.sqs.url,
      GATEWAY_S3_ENDPOINT: proxies.s3.url,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(options.memoryMb),
      SIZE_CHILD_SPEC: JSON.stringify(spec),
    },
    stdio: ['ignore', out, err, 'ipc'],
  });
  closeSync(out);
  closeSync(err);
  const reports: Partial<Record<ChildReport['phase'], ChildReport>> = {};
  let warmStart: Counts[] = [];
  let warmEnd: Counts[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      child.on('message', (report: ChildReport) => {
        reports[report.phase] = report;
        if (report.phase === 'first') warmStart = snapshot();
        if (report.phase === 'warm') warmEnd = snapshot();
        if (report.phase === 'error') reject(new Error(`${measurement.label}: ${report.message}`));
        else child.send('go');
      });
      child.once('exit', (code, signal) => {
        if (reports.warm) resolve();
        else {
          const stderr = readFileSync(stderrFile, 'utf8').slice(-1500);
          reject(new Error(`${measurement.label}: the function process ended (${signal ?? `exit ${code}`}) before it was done\n${stderr}`));
        }
      });
      child.once('error', reject);
    });
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(Object.values(proxies).map((proxy) => proxy.close()));
  }
  const cold = reports.cold as Extract<ChildReport, { phase: 'cold' }>;
  const first = reports.first as Extract<ChildReport, { phase: 'first' }>;
  const warm = reports.warm as Extract<ChildReport, { phase: 'warm' }>;
  const [dynamo, sqs, s3] = warmEnd.map((counts, index) => subtractCounts(counts, warmStart[index]));
  const n = Math.max(1, warm.requests);
  const failures = Object.fromEntries(Object.entries(warm.statuses).filter(([status]) => !/^2\d\d$/.test(status)));
  const logLine = readFileSync(stdoutFile, 'utf8')
    .split('\n')
    .find((line) => line.includes('"type":"gateway.request"'));
  return {
    measurement,
    coldInit: {
      wallMs: percentile([cold.wallMs, ...coldSamples.map((sample) => sample.wallMs)], 50),
      cpuMs: percentile([cold.cpuMs, ...coldSamples.map((sample) => sample.cpuMs)], 50),
      rssMb: cold.rssMb,
      cpuRunsMs: [cold.cpuMs, ...coldSamples.map((sample) => sample.cpuMs)].map((value) => Math.round(value * 10) / 10),
    },
    first: { wallMs: first.wallMs, cpuMs: first.cpuMs, status: first.status },
    warm: {
      requests: warm.requests,
      cpuMeanMs: mean(warm.cpuMs),
      cpuP50Ms: percentile(warm.cpuMs, 50),
      cpuP99Ms: percentile(warm.cpuMs, 99),
      wallP50Ms: percentile(warm.wallMs, 50),
      wallP99Ms: percentile(warm.wallMs, 99),
      failures,
    },
    peakRssMb: warm.peakRssMb,
    logBytes: warm.logBytes / n,
    perRequest: {
      readUnits: dynamo.readUnits / n,
      writeUnits: dynamo.writeUnits / n,
      estimatedUnits: dynamo.estimatedUnits / n,
      sqsRequests: sqs.sqsRequests / n,
      s3Writes: s3.s3Writes / n,
      s3Reads: s3.s3Reads / n,
    },
    calls: { ...dynamo.calls, ...prefixed('SQS ', sqs.calls), ...prefixed('S3 ', s3.calls) },
    units: dynamo.units,
    requestLogLine: logLine,
    firstAnswer: `${first.status} ${first.answer}`,
  };
}

function prefixed(prefix: string, calls: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(calls).map(([name, count]) => [`${prefix}${name}`, count]));
}
