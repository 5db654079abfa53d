import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The projects that need a running gateway share one: the global setup starts the emulators, the
 * fake upstream and the gateway once, whichever of these projects run.
 */
const withGateway = (name: string, include: string[]) => ({
  extends: true as const,
  test: { name, include, globalSetup: ['test/support/global-setup.ts'], sequence: { groupOrder: 1 } },
});

// The recorded provider transcripts are an extra pass (test/support/recordings.ts reads them from
// this folder); one line says when it does not run. Vitest reads this file again for each project
// and in its workers (which inherit the environment), so the line is marked as said. (The folder is
// named here rather than imported: the config imports no module of the project's.)
const recordingsDir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'shared', 'fixtures', 'providers');
if (!existsSync(recordingsDir) && !process.env.GATEWAY_RECORDINGS_NOTICE_SHOWN) {
  process.env.GATEWAY_RECORDINGS_NOTICE_SHOWN = '1';
  console.log(`provider recordings not found at ${recordingsDir}: their conformance pass is skipped`);
}

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      // No global setup: no build, no emulators, no gateway. Unit tests share no state outside their
      // process, so they may use every core (vitest leaves one free by default: one worker on two);
      // vitest runs projects of different worker counts one group after the other, unit first.
      // Threads start faster than processes, and a unit test needs nothing a process gives.
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], maxWorkers: availableParallelism(), pool: 'threads', sequence: { groupOrder: 0 } },
      },
      withGateway('integration', ['test/integration/**/*.test.ts']),
      withGateway('e2e', ['test/e2e/**/*.test.ts']),
      withGateway('package', ['test/package/**/*.test.ts']),
      withGateway('fuzz', ['test/fuzz/**/*.test.ts']),
      // Long end-to-end runs with a gateway of their own (the 1,000-line batch with faults): skipped
      // unless GATEWAY_HEAVY_TESTS is set, as `npm run test:batches` sets it.
      { extends: true, test: { name: 'heavy', include: ['test/heavy/**/*.test.ts'], sequence: { groupOrder: 2 } } },
    ],
  },
});
