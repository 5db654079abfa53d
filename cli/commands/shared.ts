import { type Command, Option } from 'commander';
import { GatewayClient, type Query, defaultGatewayUrl } from '../client';
import { UsageError } from '../errors';
import { type BodyOptions, type Output, printList, printRecord, processOutput, readBody, readTextFile } from '../io';
import type { Column } from '../table';

export interface Context {
  client: GatewayClient;
  output: Output;
}

/** The gateway and key a command talks to: flags first, then the environment. */
export async function contextOf(command: Command): Promise<Context> {
  const options = command.optsWithGlobals<{ url?: string; key?: string; keyFile?: string; json?: boolean }>();
  if (options.key !== undefined && options.keyFile !== undefined) throw new UsageError('Give --key or --key-file, not both.');
  const key =
    options.keyFile !== undefined ? (await readTextFile(options.keyFile, 'the gateway API key')).trim() : (options.key ?? process.env.GATEWAY_API_KEY);
  const url = options.url ?? process.env.GATEWAY_URL ?? defaultGatewayUrl;
  return { client: new GatewayClient(url, key || undefined), output: processOutput(Boolean(options.json)) };
}

/** An id for a URL path: one segment, whatever it holds. */
export const segment = (id: string): string => encodeURIComponent(id);

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function positiveInteger(flag: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`${flag} must be a whole number of at least 1; got "${value}".`);
    return Number(value);
  };
}

export function wholeNumber(flag: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number; got "${value}".`);
    return Number(value);
  };
}

export function number(flag: string) {
  return (value: string): number => {
    const parsed = Number(value);
    if (value.trim() === '' || !Number.isFinite(parsed)) throw new UsageError(`${flag} must be a number; got "${value}".`);
    return parsed;
  };
}

/** `key=value` pairs, as conditions and metadata filters are written on a command line. */
export function pairs(flag: string, values: string[] = []): Array<{ key: string; value: string }> {
  return values.map((text) => {
    const at = text.indexOf('=');
    if (at <= 0) throw new UsageError(`${flag} takes key=value; got "${text}".`);
    return { key: text.slice(0, at), value: text.slice(at + 1) };
  });
}

/**
 * A flag that would carry a secret on the command line is accepted by the parser only to be
 * refused with the reason, rather than reported as unknown: the person meant something sensible.
 */
export function refuseSecretFlag(command: Command, flag: string, instead: string): Command {
  const option = new Option(`${flag} <value>`).hideHelp();
  command.addOption(option);
  return command.hook('preAction', (_, action) => {
    if (action.getOptionValue(option.attributeName()) !== undefined) {
      throw new UsageError(
        `${flag} is refused: a secret on the command line lands in shell history and in the process list other users can read. Use ${instead}.`,
      );
    }
  });
}

/** `--body-file <path>` and `--body -`: the full shape of a create or update body. */
export function withBody(command: Command): Command {
  return command
    .option('--body-file <path>', 'the full JSON body from a file (flags given too override its fields)')
    .option('--body <stdin>', 'the full JSON body from standard input: --body -');
}

/** A body from --body-file/--body with the flags' fields laid over it (an empty object when neither gives anything). */
export async function bodyOf(options: BodyOptions, fields: Record<string, unknown>): Promise<Record<string, unknown>> {
  const base = (await readBody(options)) ?? {};
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) base[name] = value;
  return base;
}

export function requireFields(body: Record<string, unknown>, names: string[], hint: string): void {
  const missing = names.filter((name) => body[name] === undefined);
  if (missing.length > 0) throw new UsageError(`Missing ${missing.join(', ')}: ${hint}`);
}

interface ListSpec {
  path: string;
  columns: Column[];
  description: string;
  /** Extra query parameters, from the options `options` adds. */
  query?: (options: Record<string, any>) => Query;
  options?: (command: Command) => void;
}

/**
 * `list` over a cursor-paged route (`limit`, `after`, `has_more`, `last_id`); `--all` follows the
 * cursor to the end, so scripts need not.
 */
export function addCursorList(parent: Command, spec: ListSpec): Command {
  const command = parent
    .command('list')
    .description(spec.description)
    .option('--limit <n>', 'items per page (the route caps it)', positiveInteger('--limit'))
    .option('--after <id>', 'the page after this id (the last_id of the previous page)')
    .option('--all', 'every page, following the cursor');
  spec.options?.(command);
  return command.action(async (options, self: Command) => {
    const { client, output } = await contextOf(self);
    const query = { ...spec.query?.(options), limit: options.limit, after: options.after };
    let answer = await client.request('GET', spec.path, { query });
    if (options.all) {
      const data = [...answer.data];
      while (answer.has_more && answer.last_id) {
        answer = await client.request('GET', spec.path, { query: { ...query, after: answer.last_id } });
        data.push(...answer.data);
      }
      answer = { ...answer, data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    }
    printList(output, answer, spec.columns);
  });
}

export function addGet(parent: Command, spec: { path: (id: string) => string; argument: string; description: string }): Command {
  return parent
    .command('get')
    .description(spec.description)
    .argument(`<${spec.argument}>`)
    .action(async (id: string, _options, self: Command) => {
      const { client, output } = await contextOf(self);
      printRecord(output, await client.request('GET', spec.path(id)));
    });
}

export function addDelete(parent: Command, spec: { path: (id: string) => string; argument: string; description: string; done: string }): Command {
  return parent
    .command('delete')
    .description(spec.description)
    .argument(`<${spec.argument}>`)
    .action(async (id: string, _options, self: Command) => {
      const { client, output } = await contextOf(self);
      const answer = await client.request('DELETE', spec.path(id));
      if (output.json) output.out(JSON.stringify(answer ?? { id, deleted: true }, null, 2));
      else output.out(`${spec.done} ${id}`);
    });
}

/** What a create or update answered: the whole object, or as JSON. */
export function printWritten(context: Context, answer: unknown): void {
  printRecord(context.output, answer);
}

/**
 * The body of a PUT that replaces a whole object: the body given (`--body-file`/`--body -`) as it
 * is, or else the stored object (less the fields only answers carry) with the flags that were set
 * laid over it, so an update by flags changes only what they name.
 */
export async function replacementBody(
  context: Context,
  path: string,
  options: BodyOptions,
  fields: Record<string, unknown>,
  answerOnly: readonly string[],
): Promise<Record<string, unknown>> {
  if (options.bodyFile !== undefined || options.body !== undefined) return bodyOf(options, fields);
  const stored = await context.client.request<Record<string, unknown>>('GET', path);
  for (const name of answerOnly) delete stored[name];
  return bodyOf({}, { ...stored, ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) });
}
