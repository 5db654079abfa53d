import type { Command } from 'commander';
import type { Query } from '../client';
import { UsageError } from '../errors';
import { collect, pairs } from './shared';

/** The filters `GET /v1/logs` and the analytics groups share. */
export function filterOptions(command: Command, range: 'range' | 'since only' = 'range'): Command {
  command.option('--since <age>', 'started within this long before now: 30s, 15m, 2h, 7d' + (range === 'range' ? ' (instead of --start-time)' : ''));
  if (range === 'range') {
    command
      .option('--start-time <time>', 'started at or after (ISO 8601 or epoch seconds; default 24 hours ago)')
      .option('--end-time <time>', 'started before (ISO 8601 or epoch seconds)');
  }
  return command
    .option('--provider <name>', 'of this provider')
    .option('--model <model>', 'of this model')
    .option('--status <code>', 'with this status (429) or class (4xx)')
    .option('--api-key-id <id>', 'of this gateway key (key_…)')
    .option('--config-id <id>', 'of this saved config')
    .option('--prompt-id <id>', 'of this saved prompt')
    .option('--cache-status <status>', 'with this cache status (HIT, MISS, …)');
}

const units: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `--since 2h` as epoch seconds. */
export function sinceToStart(since: string, now = Date.now()): number {
  const match = /^(\d+)([smhd])$/.exec(since);
  if (!match) throw new UsageError(`--since takes a number and a unit (s, m, h or d), e.g. 15m; got "${since}".`);
  return Math.floor(now / 1000) - Number(match[1]) * units[match[2]];
}

export function filterQuery(options: Record<string, any>): Query {
  if (options.since !== undefined && options.startTime !== undefined) throw new UsageError('Give --since or --start-time, not both.');
  return {
    start_time: options.since !== undefined ? sinceToStart(options.since) : options.startTime,
    end_time: options.endTime,
    provider: options.provider,
    model: options.model,
    status_code: options.status,
    api_key_id: options.apiKeyId,
    config_id: options.configId,
    prompt_id: options.promptId,
    cache_status: options.cacheStatus,
  };
}

export const metadataOption = (command: Command, description: string): Command => command.option('--metadata <key=value>', description, collect);

export function metadataQuery(values: string[] | undefined): Query {
  return Object.fromEntries(pairs('--metadata', values).map(({ key, value }) => [`metadata.${key}`, value]));
}
