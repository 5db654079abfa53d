import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { installLogSink, type LogSink } from '../../lib/local/triggers/log-sink';
import { repoRoot } from '../support/repo-root';

// The built log worker (as `npm start` runs it) with a fake ingest bundle that writes to a file.
const worker = path.join(repoRoot, '.build', 'local', 'log-worker.mjs');
const ingestBundle = path.join(repoRoot, 'test', 'support', 'fakes', 'log-ingest.mjs');

let dir: string;
let stored: string;
let sink: LogSink | undefined;
let errors: string[];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'log-sink-'));
  stored = path.join(dir, 'stored');
  process.env.FAKE_LOG_INGEST_FILE = stored;
  errors = [];
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(' ')));
});

afterEach(async () => {
  await sink?.stop();
  sink = undefined;
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

const emit = (...lines: string[]) => {
  const target = (globalThis as { __gatewayLocalLogSink?: { emitLog(line: string): void } }).__gatewayLocalLogSink!;
  for (const line of lines) target.emitLog(line);
};
const storedLines = () => (existsSync(stored) ? readFileSync(stored, 'utf8').split('\n').filter(Boolean) : []);
const workerStarts = () => readFileSync(`${stored}.starts`, 'utf8').split('\n').filter(Boolean).map(Number);

describe('the local log sink', () => {
  it('sends the batches a dead worker had not acknowledged to the worker that replaces it', async () => {
    sink = await installLogSink({ worker, ingestBundle, logGroup: 'test', intervalMs: 10 });
    emit('a1', 'a2');
    void sink.flush();
    emit('crash-once', 'b1');
    void sink.flush();
    emit('c1');
    await sink.flush();
    expect(storedLines().sort()).toEqual(['a1', 'a2', 'b1', 'c1', 'crash-once']);
    expect(workerStarts()).toHaveLength(2);
    expect(errors.join('\n')).toMatch(/log worker .*SIGKILL.*starting another/i);

    emit('d1');
    await sink.flush();
    expect(storedLines()).toContain('d1');
  });

  it('waits longer before each restart of a worker that keeps dying, and gives up the batch that kills three', async () => {
    sink = await installLogSink({ worker, ingestBundle, logGroup: 'test', intervalMs: 10 });
    emit('crash-always');
    void sink.flush();
    emit('after');
    await sink.flush();
    expect(storedLines()).toEqual(['after']);
    const starts = workerStarts();
    expect(starts).toHaveLength(4);
    const gaps = starts.slice(1).map((start, index) => start - starts[index]);
    gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(100 * 2 ** index));
    expect(errors.join('\n')).toMatch(/gave up 1 request log line/i);
  });

  it('bounds what it holds for a worker that cannot store, refusing and counting the lines past the bound', async () => {
    sink = await installLogSink({ worker, ingestBundle, logGroup: 'test', intervalMs: 10, maxBacklogChars: 100 });
    emit('crash-always');
    void sink.flush();
    const lines = Array.from({ length: 10 }, (_, index) => `line-${index}`.padEnd(20, '.'));
    emit(...lines);
    await sink.flush();
    expect(storedLines()).toEqual(lines.slice(0, 4));
    expect(errors.filter((error) => /backlog is full/.test(error))).toHaveLength(1);
    expect(errors.join('\n')).toMatch(/6 request log lines were dropped/);
  });
});
