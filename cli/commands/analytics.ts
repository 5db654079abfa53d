import type { Command } from 'commander';
import { printList } from '../io';
import { field } from '../table';
import { filterOptions, filterQuery } from './filters';
import { contextOf, segment } from './shared';

export function analyticsCommand(program: Command): void {
  const analytics = program.command('analytics').description('spend, tokens, latency and errors from the hourly rollups');

  filterOptions(
    analytics
      .command('groups')
      .description('inference requests grouped by one dimension, most requests first')
      .argument('<group-by>', 'provider, ai_service, model, status_code, api_key, config, prompt, workspace or metadata.<key>')
      .option('--columns <list>', 'comma-separated: cost,total_tokens,avg_latency,p95_latency,p99_latency,success_rate,error_count,cache_hit_rate,…')
      .option('--order-by <column>', 'sort by this column, largest first (-<column> for smallest first)')
      .option('--interval <interval>', 'hour or day: adds a series per row (shown with --json)')
      .option('--user <user>', 'of this metadata._user'),
  ).action(async (groupBy: string, options, self: Command) => {
    const { client, output } = await contextOf(self);
    const answer = await client.request('GET', `/analytics/groups/${segment(groupBy)}`, {
      query: { ...filterQuery(options), 'metadata._user': options.user, columns: options.columns, order_by: options.orderBy, interval: options.interval },
    });
    const names: string[] = [answer.group_by ?? groupBy, ...(answer.columns ?? ['requests'])];
    printList(
      output,
      answer,
      names.map((name) => field(name)),
    );
    if (!output.json && answer.start_time) output.err(`${answer.start_time} to ${answer.end_time}`);
  });
}
