/**
 * stopWhenTold (lib/local/stop-when-told.ts), in processes of their own, since what it does is exit
 * them: one stop however many signals arrive, the deadline for a stop that hangs, and the stop
 * when the parent exits under an npm script (only there).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/repo-root';

interface Probe {
  pid: number;
  output: Promise<string>;
  code: Promise<number | null>;
}

/**
 * A process running stopWhenTold whose stop prints its reason and then settles after `stopMs`
 * (never when null). It prints `ready <pid>` once the handlers are in place. With `orphaned`, it is
 * started by an intermediate process that exits at once after, so its parent goes away.
 */
function probe(options: { stopMs: number | null; deadlineMs: number; env?: Record<string, string | undefined>; orphaned?: boolean }): Promise<Probe> {
  const code = [
    "const { stopWhenTold } = await import('./lib/local/stop-when-told.ts');",
    `const stopMs = ${JSON.stringify(options.stopMs)};`,
    `stopWhenTold({ name: 'probe', deadlineMs: ${options.deadlineMs}, stop: (reason) => {`,
    '  process.stdout.write(`stop ${reason}\\n`);',
    '  return new Promise((resolve) => { if (stopMs !== null) setTimeout(resolve, stopMs); });',
    '} });',
    'process.stdout.write(`ready ${process.pid}\\n`);',
    // Tells an intermediate parent (below) that it may go.
    "process.send?.('ready');",
    // Something to keep the process alive until it is told to stop.
    'setInterval(() => {}, 60_000);',
  ].join('\n');
  const args = ['--import', 'tsx', '--input-type=module', '-e', code];
  // The intermediate parent starts the probe on its own stdout and exits once the probe is ready:
  // before, the probe would find its parent gone already when it looks first.
  const launcher = options.orphaned
    ? [
        '-e',
        `const child = require('node:child_process').spawn(process.execPath, ${JSON.stringify(args)}, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });` +
          "child.once('message', () => process.exit(0));",
      ]
    : args;
  const child = spawn(process.execPath, launcher, { cwd: repoRoot, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  const output = new Promise<string>((resolve) => child.stdout.once('end', () => resolve(stdout)));
  const code$ = new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`probe not ready within 15 s: ${stdout}`)), 15_000);
    child.stdout.on('data', () => {
      const ready = /ready (\d+)/.exec(stdout);
      if (!ready) return;
      clearTimeout(timer);
      resolve({ pid: Number(ready[1]), output, code: code$ });
    });
  });
}

const stopLines = (output: string) => output.split('\n').filter((line) => line.startsWith('stop '));

describe('stopWhenTold', () => {
  it('stops once however many signals arrive, and exits with 0 when the stop is done', async () => {
    const { pid, output, code } = await probe({ stopMs: 200, deadlineMs: 5_000 });
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGTERM'] as const) process.kill(pid, signal);
    expect(await code).toBe(0);
    // Signals pending together are handled in an order of Node's choosing: one of them stops.
    expect(stopLines(await output)).toEqual([expect.stringMatching(/^stop SIG(TERM|INT|HUP)$/)]);
  }, 20_000);

  it('exits with 1 at the deadline when the stop hangs', async () => {
    const { pid, code } = await probe({ stopMs: null, deadlineMs: 300 });
    const started = performance.now();
    process.kill(pid, 'SIGINT');
    expect(await code).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  }, 20_000);

  it('stops when its parent exits under an npm script', async () => {
    const { output } = await probe({ stopMs: 0, deadlineMs: 5_000, orphaned: true, env: { npm_lifecycle_event: 'start' } });
    expect(stopLines(await output)).toEqual([expect.stringMatching(/^stop the exit of its parent \(pid \d+\)$/)]);
  }, 20_000);

  it('keeps running when its parent exits outside npm', async () => {
    const { pid, output } = await probe({ stopMs: 0, deadlineMs: 5_000, orphaned: true, env: { npm_lifecycle_event: undefined } });
    // Several times the interval at which an npm script's process checks its parent.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    process.kill(pid, 'SIGTERM');
    expect(stopLines(await output)).toEqual(['stop SIGTERM']);
  }, 20_000);
});
