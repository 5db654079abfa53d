/**
 * Recorded provider transcripts live outside the repository, in `../shared/fixtures/providers`
 * relative to the repository root. They are third-party data: read them at run time, never copy them.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  // Fall back to this file's location: test/support → repository root.
  return resolve(start, '..', '..');
}

/** The repository root (the nearest directory above this file holding package.json). */
export const repoRoot: string = findRepoRoot(dirname(fileURLToPath(import.meta.url)));

/** Where the provider fixtures are expected: `<repo root>/../shared/fixtures/providers`. */
export const fixturesDir: string = resolve(repoRoot, '..', 'shared', 'fixtures', 'providers');

/** Throws a clear error when the shared fixtures directory is missing; returns it otherwise. */
export function requireFixturesDir(): string {
  if (!existsSync(fixturesDir) || !statSync(fixturesDir).isDirectory()) {
    throw new Error(
      `Provider fixtures not found at ${fixturesDir}. These tests need the shared data directory ` +
        '`../shared` next to the repository root (with fixtures/providers inside it); ' +
        'check it out beside the repository and run the tests again.',
    );
  }
  return fixturesDir;
}

/** The exact bytes of a fixture file (e.g. 'openai_chat_stream_text_with_usage.sse'). */
export function readFixtureBytes(name: string): Buffer {
  const dir = requireFixturesDir();
  const file = join(dir, name);
  if (!existsSync(file)) throw new Error(`Fixture ${name} not found in ${dir} (see SOURCES.md there for the list).`);
  return readFileSync(file);
}

/** A fixture as UTF-8 text (byte-for-byte round trip for these text fixtures). */
export function readFixture(name: string): string {
  return readFixtureBytes(name).toString('utf8');
}

/** A JSON fixture, parsed. */
export function readFixtureJson<T = unknown>(name: string): T {
  return JSON.parse(readFixture(name)) as T;
}
