/**
 * Standalone fake upstream for the benchmark (its own process):
 *
 *   node --import tsx test/support/fake-upstream-main.ts [port]
 *   (or bundle it with esbuild and run the bundle with node)
 *
 * Port: argv[2], else FAKE_UPSTREAM_PORT, else 0 (ephemeral). Other settings from the environment:
 * FAKE_UPSTREAM_HOST (default 127.0.0.1), FAKE_UPSTREAM_CHUNKS (default stream length),
 * FAKE_UPSTREAM_CHUNK_DELAY_MS (pause between default stream events), FAKE_UPSTREAM_RECORD=1 (keep
 * recorded requests in memory; off by default here), FAKE_UPSTREAM_BURST_STREAMS=1 (write each default
 * stream in one tick instead of one event per macrotask). Prints one JSON line `{"url":...,"port":...,"pid":...}`
 * on stdout when listening, and stops on SIGTERM/SIGINT.
 */
import { startFakeUpstream } from './fake-upstream';

function intFrom(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

async function main(): Promise<void> {
  const port = intFrom(process.argv[2], 'port argument') ?? intFrom(process.env.FAKE_UPSTREAM_PORT, 'FAKE_UPSTREAM_PORT') ?? 0;
  const upstream = await startFakeUpstream({
    port,
    host: process.env.FAKE_UPSTREAM_HOST || '127.0.0.1',
    chunkCount: intFrom(process.env.FAKE_UPSTREAM_CHUNKS, 'FAKE_UPSTREAM_CHUNKS'),
    chunkDelayMs: intFrom(process.env.FAKE_UPSTREAM_CHUNK_DELAY_MS, 'FAKE_UPSTREAM_CHUNK_DELAY_MS'),
    record: process.env.FAKE_UPSTREAM_RECORD === '1',
    burstStreams: process.env.FAKE_UPSTREAM_BURST_STREAMS === '1',
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    upstream.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdout.write(JSON.stringify({ url: upstream.url, port: upstream.port, pid: process.pid }) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`fake upstream failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
