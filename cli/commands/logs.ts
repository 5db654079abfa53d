import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import type { GatewayClient, Query } from '../client';
import { printList } from '../io';
import { renderTable, field } from '../table';
import { filterOptions, filterQuery, metadataOption, metadataQuery, sinceToStart } from './filters';
import { addCursorList, contextOf, positiveInteger, segment } from './shared';

const columns = [
  field('started_at'),
  field('id'),
  field('trace_id', 'trace'),
  field('provider'),
  field('model'),
  field('status'),
  field('latency_ms', 'ms'),
  field('usage.total_tokens', 'tokens'),
  field('cost'),
  field('path'),
];

interface LogRecord {
  id: string;
  started_at?: string;
  [field: string]: unknown;
}

/**
 * One pass of `tail`: the newest records of the window, the ones not printed yet, oldest first.
 * Records are stored a moment after their answers and not always in the order requests started,
 * so each pass looks back over the whole window rather than only after the newest id seen.
 */
export async function newRecords(
  client: GatewayClient,
  query: Query,
  seen: Map<string, number>,
  lookbackSeconds: number,
  ownTrace: string,
): Promise<LogRecord[]> {
  const now = Math.floor(Date.now() / 1000);
  const answer = await client.request<{ data: LogRecord[] }>('GET', '/logs', {
    query: { ...query, start_time: now - lookbackSeconds, limit: 100 },
    headers: { 'x-gateway-trace-id': ownTrace },
  });
  // Each poll is itself a logged request: its own trace marks the records not to show.
  const fresh = answer.data.filter((record) => !seen.has(record.id) && record.trace_id !== ownTrace).reverse();
  for (const record of fresh) seen.set(record.id, now);
  // Forget what fell out of the window, so a tail left running for days stays small.
  for (const [id, at] of seen) if (at < now - 2 * lookbackSeconds) seen.delete(id);
  return fresh;
}

export function logsCommand(program: Command): void {
  const logs = program.command('logs').description("the workspace's request logs");

  addCursorList(logs, {
    path: '/logs',
    description: 'list log records, newest first by start (default: the last 24 hours)',
    columns,
    options: (command) => metadataOption(filterOptions(command).option('--trace-id <id>', 'of this trace'), 'whose metadata has key=value (repeat for more)'),
    query: (options) => ({ ...filterQuery(options), trace_id: options.traceId, ...metadataQuery(options.metadata) }),
  });

  logs
    .command('get')
    .description('the records of one trace, newest first')
    .argument('<trace-id>')
    .option('--limit <n>', 'records per page (1–100)', positiveInteger('--limit'))
    .option('--after <id>', 'the page after this log id')
    .action(async (traceId: string, options, self: Command) => {
      const { client, output } = await contextOf(self);
      printList(output, await client.request('GET', `/logs/${segment(traceId)}`, { query: { limit: options.limit, after: options.after } }), columns);
    });

  metadataOption(
    filterOptions(
      logs
        .command('tail')
        .description('print new log records as they are stored, until interrupted (Ctrl-C)')
        .option('--trace-id <id>', 'of this trace')
        .option('--inference', 'only inference requests (chat, embeddings, …), not the control plane’s reads and writes')
        .option('--interval <seconds>', 'seconds between polls', positiveInteger('--interval'), 2)
        .option('--lines <n>', 'records of the recent past to print first', (value) => (value === '0' ? 0 : positiveInteger('--lines')(value)), 10),
      'since only',
    ),
    'whose metadata has key=value (repeat for more)',
  ).action(async (options, self: Command) => {
    const { client, output } = await contextOf(self);
    const query: Query = { ...filterQuery(options), trace_id: options.traceId, ...metadataQuery(options.metadata) };
    delete query.start_time;
    // The window each poll reads (default 5 minutes): a record stored late still shows up, and the first pass shows the recent past.
    const lookback = Math.max(60, options.since === undefined ? 300 : Math.floor(Date.now() / 1000) - sinceToStart(options.since));
    const seen = new Map<string, number>();
    const ownTrace = `gateway-admin-tail-${randomUUID()}`;
    const widths: number[] = [];
    const shown = (records: LogRecord[]) => (options.inference ? records.filter((record) => record.inference === true) : records);
    let headerShown = false;
    const show = (records: LogRecord[]) => {
      if (records.length === 0) return;
      if (output.json) for (const record of records) output.out(JSON.stringify(record));
      else {
        const table = renderTable(records, columns, widths).split('\n');
        output.out((headerShown ? table.slice(1) : table).join('\n'));
        headerShown = true;
      }
    };
    const recent = shown(await newRecords(client, query, seen, lookback, ownTrace));
    show(options.lines === 0 ? [] : recent.slice(-options.lines));
    // Says on stderr (so --json stays clean) that what is stored from now on will show: a record stored before this line counts as the past.
    output.err(`Following new log records every ${options.interval}s (Ctrl-C to stop).`);
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, options.interval * 1000));
      show(shown(await newRecords(client, query, seen, lookback, ownTrace)));
    }
  });
}
