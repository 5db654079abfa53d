import type { Command } from 'commander';
import { field } from '../table';
import { addCursorList, addDelete, bodyOf, contextOf, printWritten, requireFields, segment, withBody } from './shared';

export function keysCommand(program: Command): void {
  const keys = program.command('keys').description("the workspace's gateway API keys (admin or owner key)");

  addCursorList(keys, {
    path: '/api-keys',
    description: "list the workspace's keys, newest first (no secrets)",
    columns: [field('id'), field('name'), field('role'), field('status'), field('hint'), field('workspace_id', 'workspace'), field('created_at')],
  });

  withBody(
    keys
      .command('create')
      .description('create a key; its secret is printed this once')
      .option('--name <name>', 'what the key is for (required)')
      .option('--role <role>', 'member (default), admin, or owner (owner keys only)')
      .option('--workspace <id>', 'the workspace the key belongs to (owner keys only; default the caller’s)'),
  ).action(async (options, self: Command) => {
    const context = await contextOf(self);
    const body = await bodyOf(options, { name: options.name, role: options.role, workspace_id: options.workspace });
    requireFields(body, ['name'], 'give --name <name>.');
    const created = await context.client.request('POST', '/api-keys', { body });
    printWritten(context, created);
    if (!context.output.json) context.output.err('The secret in "key" is shown only this once: store it now.');
  });

  addDelete(keys, {
    path: (id) => `/api-keys/${segment(id)}`,
    argument: 'key-id',
    description: 'revoke a key (it stops working within 5 seconds)',
    done: 'Revoked',
  });
}
