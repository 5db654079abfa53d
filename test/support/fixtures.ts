/**
 * Provider fixtures. The tests read the repository's own, in `test/fixtures/providers`: written from
 * the providers' documented wire formats, so a bare clone runs every assertion.
 *
 * Recorded third-party transcripts may also sit beside the repository, in
 * `<GATEWAY_SHARED_DIR or ../shared>/fixtures/providers`. They are read at run time, never copied;
 * the recorded-conformance tests replay them only when they are there (`sharedFixtures()`).
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
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

/** The repository's own provider fixtures (see the README there for what each one exercises). */
export const fixturesDir: string = join(repoRoot, 'test', 'fixtures', 'providers');

function readFrom(dir: string, name: string): Buffer {
  const file = join(dir, name);
  if (!existsSync(file)) throw new Error(`Fixture ${name} not found in ${dir}.`);
  return readFileSync(file);
}

/** The exact bytes of one of the repository's fixtures (e.g. 'openai-chat-stream-text.sse'). */
export function readFixtureBytes(name: string): Buffer {
  return readFrom(fixturesDir, name);
}

/** A fixture as UTF-8 text. */
export function readFixture(name: string): string {
  return readFixtureBytes(name).toString('utf8');
}

/** A JSON fixture, parsed. */
export function readFixtureJson<T = unknown>(name: string): T {
  return JSON.parse(readFixture(name)) as T;
}

/**
 * The folder that may hold the recorded transcripts: `GATEWAY_SHARED_DIR` when set (so a run can
 * point elsewhere, or at nothing, to prove the suite does not need it), else `../shared` beside the
 * repository root.
 */
export const sharedDir: string = process.env.GATEWAY_SHARED_DIR ? resolve(repoRoot, process.env.GATEWAY_SHARED_DIR) : resolve(repoRoot, '..', 'shared');

export interface SharedFixtures {
  dir: string;
  names(subdir?: string): string[];
  readBytes(name: string): Buffer;
  read(name: string): string;
  readJson<T = any>(name: string): T;
}

/** The recorded transcripts, or undefined when `<sharedDir>/fixtures/providers` is not there. */
export function sharedFixtures(): SharedFixtures | undefined {
  const dir = join(sharedDir, 'fixtures', 'providers');
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return undefined;
  const readBytes = (name: string) => readFrom(dir, name);
  return {
    dir,
    names: (subdir) => readdirSync(subdir ? join(dir, subdir) : dir),
    readBytes,
    read: (name) => readBytes(name).toString('utf8'),
    readJson: (name) => JSON.parse(readBytes(name).toString('utf8')),
  };
}

/**
 * The recorded transcripts for a conformance file, saying in one line when they are missing. The
 * line goes straight to stdout: vitest's console capture would add a header line of its own.
 */
export function sharedFixturesOrNotice(what: string): SharedFixtures | undefined {
  const shared = sharedFixtures();
  if (!shared)
    process.stdout.write(`${what}: skipped, no provider recordings in ${join(sharedDir, 'fixtures', 'providers')} (optional; see GATEWAY_SHARED_DIR)\n`);
  return shared;
}
