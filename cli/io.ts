import { readFile } from 'node:fs/promises';
import { UsageError } from './errors';
import { type Column, renderRecord, renderTable } from './table';

/** Where a command writes: answers to stdout, notes for people to stderr, so what `--json` prints pipes clean. */
export interface Output {
  json: boolean;
  out: (text: string) => void;
  err: (text: string) => void;
}

export const processOutput = (json: boolean): Output => ({
  json,
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
});

/** A list answer: its rows as a table, or the answer itself as JSON for scripts. */
export function printList(output: Output, answer: unknown, columns: Column[], rows?: Record<string, unknown>[]): void {
  if (output.json) return output.out(JSON.stringify(answer, null, 2));
  const data = rows ?? ((answer as { data?: Record<string, unknown>[] }).data || []);
  if (data.length === 0) return output.out('(none)');
  output.out(renderTable(data, columns));
  const more = answer as { has_more?: boolean; last_id?: string | null; total?: number };
  if (more.has_more && more.last_id) output.err(`More: --after ${more.last_id} (or --all)`);
}

export function printRecord(output: Output, answer: unknown): void {
  if (output.json) return output.out(JSON.stringify(answer, null, 2));
  output.out(renderRecord((answer ?? {}) as Record<string, unknown>));
}

let stdinTaken: string | undefined;

/** Standard input feeds one thing per run; a second reader would get nothing and send an empty value. */
export async function readStdin(purpose: string): Promise<string> {
  if (stdinTaken) throw new UsageError(`Standard input is already read for ${stdinTaken}; it cannot also carry ${purpose}. Put one of them in a file.`);
  stdinTaken = purpose;
  if (process.stdin.isTTY) process.stderr.write(`Reading ${purpose} from standard input; end it with Ctrl-D.\n`);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function readTextFile(path: string, purpose: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${purpose} from ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
}

/**
 * A secret from a file or from standard input, never from the command line. A trailing newline
 * is what editors and `echo` add, not part of the key.
 */
export async function readSecret(options: { file?: string; stdin?: boolean }, purpose: string, flag: string): Promise<string | undefined> {
  if (options.file !== undefined && options.stdin) throw new UsageError(`Give ${flag}-file or ${flag}-stdin, not both.`);
  if (options.file === undefined && !options.stdin) return undefined;
  const text = options.file !== undefined ? await readTextFile(options.file, purpose) : await readStdin(purpose);
  const secret = text.replace(/\r?\n$/, '');
  if (secret.length === 0) throw new UsageError(`${purpose} is empty.`);
  return secret;
}

function parseJsonObject(text: string, source: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${source} is not JSON: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`${source} must hold a JSON object.`);
  return parsed as Record<string, unknown>;
}

export interface BodyOptions {
  bodyFile?: string;
  body?: string;
}

/**
 * The full request body from `--body-file <path>` or `--body -` (standard input). A body given
 * inline is refused: bodies may hold credentials, and the command line is not a place for them.
 */
export async function readBody(options: BodyOptions): Promise<Record<string, unknown> | undefined> {
  if (options.body !== undefined && options.body !== '-') {
    throw new UsageError(
      '--body takes only "-" (the JSON body on standard input); use --body-file <path> for a file. Inline JSON is refused: a body may hold credentials, and command lines end up in shell history and the process list.',
    );
  }
  if (options.body !== undefined && options.bodyFile !== undefined) throw new UsageError('Give --body-file or --body -, not both.');
  if (options.bodyFile !== undefined) return parseJsonObject(await readTextFile(options.bodyFile, 'the body'), options.bodyFile);
  if (options.body === '-') return parseJsonObject(await readStdin('the JSON body'), 'standard input');
  return undefined;
}

export async function readJsonFile(path: string, purpose: string): Promise<unknown> {
  const text = path === '-' ? await readStdin(purpose) : await readTextFile(path, purpose);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${purpose} in ${path === '-' ? 'standard input' : path} is not JSON: ${(error as Error).message}`);
  }
}
