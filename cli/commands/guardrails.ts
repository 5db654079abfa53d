import type { Command } from 'commander';
import { readJsonFile } from '../io';
import { field } from '../table';
import { addCursorList, addDelete, addGet, bodyOf, contextOf, printWritten, replacementBody, requireFields, segment, withBody } from './shared';

const answerOnly = ['object', 'id', 'created_at', 'updated_at'];

/** Checks may carry webhook headers with secrets: a file or standard input, like bodies. */
const checksOptions = (command: Command): Command =>
  command
    .option('--name <name>', 'its name')
    .option('--checks-file <path>', 'the checks, a JSON list of {id, parameters}, from a file or - for standard input')
    .option('--actions-file <path>', 'the actions, a JSON object {deny, async, on_fail, on_success}, from a file or -');

async function fieldsOf(options: Record<string, any>) {
  return {
    name: options.name,
    checks: options.checksFile !== undefined ? await readJsonFile(options.checksFile, 'the checks') : undefined,
    actions: options.actionsFile !== undefined ? await readJsonFile(options.actionsFile, 'the actions') : undefined,
  };
}

export function guardrailsCommand(program: Command): void {
  const guardrails = program.command('guardrails').description('saved guardrails (grd_…), named in configs’ hooks');

  addCursorList(guardrails, {
    path: '/guardrails',
    description: 'list saved guardrails, newest first',
    columns: [field('id'), field('name'), field('created_at'), field('updated_at')],
  });

  addGet(guardrails, { path: (id) => `/guardrails/${segment(id)}`, argument: 'guardrail-id', description: 'show a guardrail (header values masked)' });

  withBody(checksOptions(guardrails.command('create').description('save a guardrail (admin)'))).action(async (options, self: Command) => {
    const context = await contextOf(self);
    const body = await bodyOf(options, await fieldsOf(options));
    requireFields(body, ['name', 'checks'], 'give --name and --checks-file (or a body with both).');
    printWritten(context, await context.client.request('POST', '/guardrails', { body }));
  });

  withBody(
    checksOptions(
      guardrails
        .command('update')
        .description('replace a guardrail (admin); without a body the stored one is read and the flags laid over it')
        .argument('<guardrail-id>'),
    ),
  ).action(async (id: string, options, self: Command) => {
    const context = await contextOf(self);
    const path = `/guardrails/${segment(id)}`;
    const fields = await fieldsOf(options);
    // The route replaces the whole guardrail; masked values sent back keep the stored ones.
    const body = await replacementBody(context, path, options, fields, answerOnly);
    printWritten(context, await context.client.request('PUT', path, { body }));
  });

  addDelete(guardrails, { path: (id) => `/guardrails/${segment(id)}`, argument: 'guardrail-id', description: 'delete a guardrail (admin)', done: 'Deleted' });
}
