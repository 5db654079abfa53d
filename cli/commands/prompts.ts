import type { Command } from 'commander';
import { printList, readStdin, readTextFile } from '../io';
import { field } from '../table';
import { addCursorList, addDelete, addGet, bodyOf, contextOf, positiveInteger, printWritten, requireFields, segment, withBody } from './shared';

const promptOptions = (command: Command): Command =>
  command
    .option('--name <name>', 'its name')
    .option('--template-file <path>', 'the Mustache template (the "string" field) from a file, or - for standard input')
    .option('--model <model>', 'the model it runs with')
    .option('--provider <@slug>', 'the catalog entry it runs with, as @<slug>');

async function fieldsOf(options: Record<string, any>) {
  const template =
    options.templateFile === undefined
      ? undefined
      : options.templateFile === '-'
        ? await readStdin('the template')
        : await readTextFile(options.templateFile, 'the template');
  return { name: options.name, string: template, model: options.model, provider: options.provider };
}

export function promptsCommand(program: Command): void {
  const prompts = program.command('prompts').description('versioned prompt templates');

  addCursorList(prompts, {
    path: '/prompts',
    description: 'list prompts, newest first',
    columns: [field('id'), field('slug'), field('name'), field('published_version', 'published'), field('latest_version', 'latest'), field('updated_at')],
  });

  addGet(prompts, {
    path: (id) => `/prompts/${segment(id)}`,
    argument: 'prompt-id',
    description: 'show the published version, or <id>@latest / <id>@<n>',
  });

  prompts
    .command('versions')
    .description('list every version of a prompt, newest first')
    .argument('<prompt-id>')
    .action(async (id: string, _options, self: Command) => {
      const { client, output } = await contextOf(self);
      const answer = await client.request('GET', `/prompts/${segment(id)}/versions`);
      printList(output, answer, [
        field('version'),
        field('version_id'),
        field('version_description', 'description'),
        field('version_created_at', 'created_at'),
      ]);
    });

  withBody(promptOptions(prompts.command('create').description('store a prompt as version 1, published (admin)'))).action(async (options, self: Command) => {
    const context = await contextOf(self);
    const body = await bodyOf(options, await fieldsOf(options));
    requireFields(body, ['name', 'string'], 'give --name and --template-file (or a body with "name" and "string").');
    printWritten(context, await context.client.request('POST', '/prompts', { body }));
  });

  withBody(
    promptOptions(
      prompts
        .command('update')
        .description('store a new version (admin); fields not given come from the latest version')
        .argument('<prompt-id>')
        .option('--no-patch', 'store only what is given, not the latest version’s other fields'),
    ),
  ).action(async (id: string, options, self: Command) => {
    const context = await contextOf(self);
    const body = await bodyOf(options, { ...(await fieldsOf(options)), patch: options.patch ? true : undefined });
    printWritten(context, await context.client.request('PUT', `/prompts/${segment(id)}`, { body }));
  });

  prompts
    .command('publish')
    .description('make a version the published one (admin)')
    .argument('<prompt-id>')
    .argument('<version>', 'the version to publish', positiveInteger('<version>'))
    .action(async (id: string, version: number, _options, self: Command) => {
      const context = await contextOf(self);
      printWritten(context, await context.client.request('PUT', `/prompts/${segment(id)}/makeDefault`, { body: { version } }));
    });

  addDelete(prompts, {
    path: (id) => `/prompts/${segment(id)}`,
    argument: 'prompt-id',
    description: 'delete a prompt and all its versions (admin)',
    done: 'Deleted',
  });
}
