import type { Command } from 'commander';
import { field } from '../table';
import { addCursorList, addDelete, addGet, bodyOf, contextOf, printWritten, requireFields, segment, withBody } from './shared';

export function workspacesCommand(program: Command): void {
  const workspaces = program.command('workspaces').description('workspaces (owners see the organisation’s, other keys their own)');

  addCursorList(workspaces, {
    path: '/workspaces',
    description: 'list workspaces, newest first',
    columns: [field('id'), field('name'), field('slug'), field('status'), field('is_default', 'default'), field('created_at')],
    options: (command) => command.option('--status <list>', 'active (default), archived, or active,archived (admin or owner for archived)'),
    query: (options) => ({ status: options.status }),
  });

  addGet(workspaces, { path: (id) => `/workspaces/${segment(id)}`, argument: 'workspace-id', description: 'show a workspace' });

  withBody(
    workspaces
      .command('create')
      .description('create a workspace (owner key)')
      .option('--name <name>', 'its name (required)')
      .option('--description <text>', 'what it is for'),
  ).action(async (options, self: Command) => {
    const context = await contextOf(self);
    const body = await bodyOf(options, { name: options.name, description: options.description });
    requireFields(body, ['name'], 'give --name <name>.');
    printWritten(context, await context.client.request('POST', '/workspaces', { body }));
  });

  withBody(
    workspaces
      .command('update')
      .description('change a workspace (owner key; admins may change the cache settings of their own)')
      .argument('<workspace-id>')
      .option('--name <name>', 'a new name')
      .option('--description <text>', 'a new description')
      .option('--status <status>', 'archived or active'),
  ).action(async (id: string, options, self: Command) => {
    const context = await contextOf(self);
    const body = await bodyOf(options, { name: options.name, description: options.description, status: options.status });
    printWritten(context, await context.client.request('PUT', `/workspaces/${segment(id)}`, { body }));
  });

  addDelete(workspaces, {
    path: (id) => `/workspaces/${segment(id)}`,
    argument: 'workspace-id',
    description: 'archive a workspace (owner key); its keys stop working, its data stays',
    done: 'Archived',
  });
}
