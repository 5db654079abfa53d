import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { analyticsCommand } from './commands/analytics';
import { bootstrapCommand } from './commands/bootstrap';
import { configsCommand } from './commands/configs';
import { guardrailsCommand } from './commands/guardrails';
import { logsCommand } from './commands/logs';
import { policiesCommand } from './commands/policies';
import { promptsCommand } from './commands/prompts';
import { providersCommand } from './commands/providers';
import { workspacesCommand } from './commands/workspaces';
import { keysCommand } from './commands/keys';
import { defaultGatewayUrl } from './client';
import { ApiError, UnreachableError, UsageError, exitCodes } from './errors';

const epilogue = `
Environment: GATEWAY_URL (default ${defaultGatewayUrl}), GATEWAY_API_KEY.
Exit codes: 0 done, 1 the gateway refused (its message, HTTP status and code on stderr),
2 bad usage, 3 the gateway could not be reached.`;

export function program(): Command {
  const root = new Command('gateway-admin')
    .description('Manage an LLM gateway over its control API: keys, workspaces, providers, configs, guardrails, prompts, policies, logs, analytics.')
    // Usage errors leave through the catch in main, so they get exit code 2 rather than commander's 1.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .option('--url <url>', 'the gateway, e.g. http://localhost:8787/v1 (env GATEWAY_URL)')
    .addOption(new Option('--key <key>', 'a gateway API key (env GATEWAY_API_KEY, which keeps it out of shell history)'))
    .option('--key-file <path>', 'read the gateway API key from a file')
    .option('--json', 'print the API’s JSON answers, for scripts')
    .addHelpText('after', epilogue);
  keysCommand(root);
  workspacesCommand(root);
  providersCommand(root);
  configsCommand(root);
  guardrailsCommand(root);
  promptsCommand(root);
  policiesCommand(root);
  logsCommand(root);
  analyticsCommand(root);
  bootstrapCommand(root);
  return root;
}

/** Runs one command line and answers its exit code; nothing here calls process.exit, so output drains. */
export async function main(argv: string[]): Promise<number> {
  try {
    await program().parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : exitCodes.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help asked for (commander's exit code 0) is done; everything else it stops on is a usage mistake.
      return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${error.message}\n`);
      return exitCodes.usage;
    }
    if (error instanceof ApiError) {
      process.stderr.write(`error: ${error.describe()}\n`);
      return exitCodes.refused;
    }
    if (error instanceof UnreachableError) {
      process.stderr.write(`error: ${error.message}\n`);
      return exitCodes.unreachable;
    }
    process.stderr.write(`error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return exitCodes.refused;
  }
}

// Run as a file of its own (node .build/cli/gateway-admin.mjs) it is the program; imported by the bin, it only exports main.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) process.exitCode = await main(process.argv);
