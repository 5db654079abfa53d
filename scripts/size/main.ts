/**
 * `npm run size`: measures every function bundle in a process of its own (cold init, first request,
 * warm CPU per request, peak RSS, DynamoDB/SQS/S3 calls and log bytes per request), models Lambda
 * sizes from it, and prints the sizes and the cost table. docs/sizing.md explains the method.
 *
 *   npm run size                 10,000 warm requests per function; prints, writes nothing
 *   npm run size -- --quick      500 warm requests per function (what CI runs)
 *   npm run size -- --write      also writes memorySize into serverless.yml and the README's cost table
 *   npm run size -- --no-build   use the existing .build/ instead of building first
 *   npm run size -- --only chatCompletions,logIngest   those functions only (never written)
 *   npm run size -- --requests 2000                     that many warm requests per function
 *
 * Cold init is the median of 3 fresh processes with --quick, 5 without.
 *
 * The exit code is non-zero only when the measurement itself fails, never because of a number.
 */
import '../../lib/local/sdk-node-notice';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { killAll, repoRoot } from '../../bench/lib/services';
import { measureFunction, type MeasuredFunction } from './measure';
import { costMarkdown, costRows, measurementTable, perSizeTable, sizeComment, sizeFunctions } from './report';
import { LOG_BATCH, measurements } from './scenarios';
import { startSizeEnvironment } from './setup';
import { replaceBetweenMarkers } from './write-readme';
import { writeMemorySizes, type MemorySetting } from './write-serverless';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    write: { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
    only: { type: 'string' },
    requests: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  process.stdout.write('Usage: npm run size -- [--quick] [--write] [--no-build] [--only <function,...>] [--requests <n>]\n');
  process.exit(0);
}
const requests = flags.requests ? Number(flags.requests) : flags.quick ? 500 : 10_000;
if (!Number.isInteger(requests) || requests < 1) throw new Error(`--requests needs a positive whole number, got ${flags.requests}`);
const only = flags.only ? new Set(flags.only.split(',').map((name) => name.trim())) : undefined;
if (only && flags.write) throw new Error('--write needs every function measured; leave out --only');

const log = (line: string) => process.stderr.write(`${line}\n`);

async function buildChild(): Promise<string> {
  const outfile = path.join(repoRoot, '.build', 'size', 'child.mjs');
  mkdirSync(path.dirname(outfile), { recursive: true });
  await build({
    entryPoints: [path.join(repoRoot, 'scripts', 'size', 'child.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  return outfile;
}

async function main(): Promise<void> {
  if (!flags['no-build']) {
    log('Building the function bundles and the local runtime …');
    const built = spawnSync(process.execPath, ['scripts/build.mjs', '--local'], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
    if (built.status !== 0) throw new Error('the build failed');
  }
  const childScript = await buildChild();
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'gateway-size-'));
  const environment = await startSizeEnvironment(workDir, log);
  const results: MeasuredFunction[] = [];
  try {
    const planned = measurements(environment.context).filter((m) => !only || only.has(m.functionName));
    for (const measurement of planned) {
      if (measurement.request.kind === 'logs') {
        const line = results.find((r) => r.requestLogLine)?.requestLogLine;
        if (line) measurement.request.line = line;
        else if (measurement.request.line === '{}') throw new Error('log ingestion needs a request-log line: measure chatCompletions with it');
      }
      const bundle = path.join(repoRoot, '.build', 'functions', measurement.functionName, 'index.mjs');
      if (!existsSync(bundle)) throw new Error(`no bundle for ${measurement.functionName} (${bundle})`);
      // A log delivery is one invocation for many records: as many records as requests elsewhere.
      const invocations = measurement.request.kind === 'logs' ? Math.max(20, Math.ceil(requests / LOG_BATCH)) : requests;
      log(`Measuring ${measurement.label} (${invocations} warm invocations) …`);
      const result = await measureFunction({
        measurement,
        bundle,
        childScript,
        memoryMb: environment.memorySizes[measurement.functionName] ?? 1024,
        requests: invocations,
        env: environment.functionEnv,
        endpoints: environment.endpoints,
        indexes: environment.indexes,
        workDir,
        coldRuns: flags.quick ? 2 : 4,
      });
      if (!/^2\d\d$/.test(String(result.first.status))) log(`  ! first answer: ${result.firstAnswer.slice(0, 300)}`);
      results.push(result);
    }
  } finally {
    await Promise.all(environment.services.map((service) => service.stop()));
  }

  const sized = sizeFunctions(results);
  const rows = costRows(sized);
  const markdown = costMarkdown(rows, { quick: flags.quick === true, requests });
  process.stdout.write(`\nPer function (CPU on this machine's cores; "at size" is modelled at the chosen size):\n\n${measurementTable(sized)}\n`);
  process.stdout.write(`\nInference, modelled duration and Lambda cost per million at each size (MB):\n\n${perSizeTable(results)}\n`);
  process.stdout.write(`\nDynamoDB, SQS and S3 calls of the warm requests (totals):\n\n`);
  for (const result of results)
    process.stdout.write(`  ${result.measurement.label}: calls ${JSON.stringify(result.calls)}, request units ${JSON.stringify(result.units)}\n`);
  process.stdout.write(`\nWhat it costs:\n\n${markdown}\n`);

  if (flags.write) {
    const serverlessFile = path.join(repoRoot, 'serverless.yml');
    const settings = new Map<string, MemorySetting>(
      sized.map((entry) => [entry.functionName, { memoryMb: entry.choice.memoryMb, comment: sizeComment(entry) }]),
    );
    writeFileSync(serverlessFile, writeMemorySizes(readFileSync(serverlessFile, 'utf8'), settings));
    const readmeFile = path.join(repoRoot, 'README.md');
    writeFileSync(readmeFile, replaceBetweenMarkers(readFileSync(readmeFile, 'utf8'), markdown));
    log('Wrote memorySize into serverless.yml and the cost table into README.md.');
  }
  rmSync(workDir, { recursive: true, force: true });
}

main().catch((error) => {
  killAll();
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
