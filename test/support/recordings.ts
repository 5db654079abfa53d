/**
 * Recorded provider transcripts: the conformance pass over real exchanges. They are
 * third-party data kept beside the repository (`../shared/fixtures/providers` from its root) and read
 * at run time, never copied in. The tests of whole recorded exchanges (Anthropic, Azure and Bedrock
 * above all) read them here and are skipped without them; the adapters they exercise are covered in
 * a bare clone by the end-to-end tests against the fake upstream, so a clone with nothing beside it
 * tests green. A suite over recordings is declared with `describe.skipIf(!recordingsPresent)`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot } from './repo-root';

/** Where the recordings are looked for. */
export const recordingsDir: string = resolve(repoRoot, '..', 'shared', 'fixtures', 'providers');

/** Whether the recordings are there; the suites over them are skipped when not. */
export const recordingsPresent: boolean = existsSync(recordingsDir) && statSync(recordingsDir).isDirectory();

/** The exact bytes of a recording (e.g. 'openai_chat_stream_text_with_usage.sse'). */
export function readRecordingBytes(name: string): Buffer {
  if (!recordingsPresent) throw new Error(`Provider recordings not found at ${recordingsDir}; guard this suite with describe.skipIf(!recordingsPresent).`);
  const file = join(recordingsDir, name);
  if (!existsSync(file)) throw new Error(`Recording ${name} not found in ${recordingsDir} (SOURCES.md there lists them).`);
  return readFileSync(file);
}

/** A recording as UTF-8 text. */
export function readRecording(name: string): string {
  return readRecordingBytes(name).toString('utf8');
}

/** A JSON recording, parsed. */
export function readRecordingJson<T = unknown>(name: string): T {
  return JSON.parse(readRecording(name)) as T;
}
