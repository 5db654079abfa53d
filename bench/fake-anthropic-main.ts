/**
 * The fake Anthropic Messages API (test/support/fakes/anthropic.ts) in a process of its own, for the
 * benchmark:
 *
 *   node --import tsx bench/fake-anthropic-main.ts
 *
 * Prints one JSON line `{"url":"http://127.0.0.1:PORT/v1","pid":…}` when listening and stops on
 * SIGTERM/SIGINT. The fake keeps every request it answers; under load that list is emptied every
 * second so the process does not grow.
 */
import { startFakeAnthropic } from '../test/support/fakes/anthropic';

async function main(): Promise<void> {
  const fake = await startFakeAnthropic();
  const trim = setInterval(() => fake.requests.splice(0, fake.requests.length), 1_000);
  trim.unref();
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    clearInterval(trim);
    fake.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
    // Keep-alive connections held by a client keep close() waiting; do not hang on them.
    setTimeout(() => process.exit(0), 1_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.stdout.write(`${JSON.stringify({ url: fake.url, pid: process.pid })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`fake anthropic failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
