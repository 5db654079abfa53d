import type { Command } from 'commander';
import { readJsonFile } from '../io';
import { field } from '../table';
import { addCursorList, addDelete, addGet, bodyOf, contextOf, printWritten, requireFields, segment, withBody } from './shared';

/** A config may hold provider keys, so it comes from a file or standard input, never an argument. */
const configOption = (command: Command): Command => command.option('--config-file <path>', 'the config JSON object from a file, or - for standard input');

export function configsCommand(program: Command): void {
  const configs = program.command('configs').description('saved routing configs (cfg_…), versioned');

  addCursorList(configs, {
    path: '/configs',
    description: 'list saved configs, newest first',
    columns: [field('id'), field('name'), field('version'), field('created_at'), field('updated_at')],
  });

  addGet(configs, {
    path: (id) => `/configs/${segment(id)}`,
    argument: 'config-id',
    description: 'show the latest version of a config, or a given one as cfg_…@<n> (secrets masked)',
  });

  withBody(configOption(configs.command('create').description('validate and save a config as version 1 (admin)').option('--name <name>', 'its name'))).action(
    async (options, self: Command) => {
      const context = await contextOf(self);
      const config = options.configFile !== undefined ? await readJsonFile(options.configFile, 'the config') : undefined;
      const body = await bodyOf(options, { name: options.name, config });
      requireFields(body, ['config'], 'give --config-file <path> (or a body with "config").');
      printWritten(context, await context.client.request('POST', '/configs', { body }));
    },
  );

  withBody(
    configOption(configs.command('update').description('save a new version of a config (admin)').argument('<config-id>').option('--name <name>', 'a new name')),
  ).action(async (id: string, options, self: Command) => {
    const context = await contextOf(self);
    const config = options.configFile !== undefined ? await readJsonFile(options.configFile, 'the config') : undefined;
    const body = await bodyOf(options, { name: options.name, config });
    requireFields(body, ['config'], 'give --config-file <path> (or a body with "config"): every version holds a whole config.');
    printWritten(context, await context.client.request('PUT', `/configs/${segment(id)}`, { body }));
  });

  addDelete(configs, {
    path: (id) => `/configs/${segment(id)}`,
    argument: 'config-id',
    description: 'delete a config and its versions (admin)',
    done: 'Deleted',
  });
}
