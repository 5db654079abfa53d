import type { Command } from 'commander';
import { readSecret } from '../io';
import { field } from '../table';
import {
  addCursorList,
  addDelete,
  addGet,
  bodyOf,
  contextOf,
  printWritten,
  replacementBody,
  refuseSecretFlag,
  requireFields,
  segment,
  withBody,
} from './shared';

/** Fields an answer carries that a body may repeat but that say nothing new. */
const answerOnly = ['object', 'id', 'workspace_id', 'credentials', 'created_at', 'updated_at'];

const secretFlags = (command: Command): Command => {
  command
    .option('--api-key-file <path>', "the provider's API key, read from this file")
    .option('--api-key-stdin', "the provider's API key, read from standard input");
  return refuseSecretFlag(command, '--api-key', '--api-key-file <path> or --api-key-stdin');
};

export function providersCommand(program: Command): void {
  const providers = program.command('providers').description("the workspace's provider catalog: stored credentials used as @<slug> (virtual keys)");

  addCursorList(providers, {
    path: '/providers',
    description: 'list catalog entries, newest first (credentials only as "set" or a masked hint)',
    columns: [field('slug'), field('provider'), field('name'), field('custom_host'), field('credentials'), field('created_at')],
  });

  addGet(providers, { path: (slug) => `/providers/${segment(slug)}`, argument: 'slug', description: 'show a catalog entry' });

  withBody(
    secretFlags(
      providers
        .command('create')
        .description('store a provider integration (admin); cloud credentials go in --body-file')
        .option('--slug <slug>', 'the name requests use, as @<slug> (required)')
        .option('--provider <name>', 'the provider: openai, anthropic, bedrock, … (required)')
        .option('--name <name>', 'a name for people (default the slug)')
        .option('--custom-host <url>', 'send its requests to this base URL instead of the provider’s'),
    ),
  ).action(async (options, self: Command) => {
    const context = await contextOf(self);
    const apiKey = await readSecret({ file: options.apiKeyFile, stdin: options.apiKeyStdin }, "the provider's API key", '--api-key');
    const body = await bodyOf(options, {
      slug: options.slug,
      provider: options.provider,
      name: options.name,
      custom_host: options.customHost,
      api_key: apiKey,
    });
    requireFields(body, ['slug', 'provider'], 'give --slug <slug> and --provider <name>.');
    printWritten(context, await context.client.request('POST', '/providers', { body }));
  });

  withBody(
    secretFlags(
      providers
        .command('update')
        .description(
          'change a catalog entry (admin). Without --body-file/--body the stored entry is read and the flags laid over it; credentials change only when given',
        )
        .argument('<slug>')
        .option('--provider <name>', 'the provider')
        .option('--name <name>', 'a new name')
        .option('--custom-host <url>', 'a new base URL (the API asks for the credentials again)'),
    ),
  ).action(async (slug: string, options, self: Command) => {
    const context = await contextOf(self);
    const apiKey = await readSecret({ file: options.apiKeyFile, stdin: options.apiKeyStdin }, "the provider's API key", '--api-key');
    const path = `/providers/${segment(slug)}`;
    const fields = { provider: options.provider, name: options.name, custom_host: options.customHost, api_key: apiKey };
    // A PUT replaces every non-secret field, so flags alone start from what is stored.
    const body = await replacementBody(context, path, options, fields, answerOnly);
    printWritten(context, await context.client.request('PUT', path, { body }));
  });

  addDelete(providers, { path: (slug) => `/providers/${segment(slug)}`, argument: 'slug', description: 'remove a catalog entry (admin)', done: 'Deleted' });
}
