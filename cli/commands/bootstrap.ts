import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { GatewayClient } from '../client';
import { UsageError } from '../errors';
import { contextOf } from './shared';

const help = `
A gateway's first owner key is made where its data lives, not over the API (no key exists yet to
call it with):

  Local (npm start): the first start creates the organisation, its default workspace and an owner
  key, and prints the key once. To start with a key of your own choosing, set GATEWAY_ADMIN_KEY
  before npm start. Without --stage, this command checks that the gateway at --url is up and, given
  a key, that the key is accepted, and says which workspace it acts in.

  Deployed (--stage): runs this repository's bootstrap against the stage's DynamoDB table with your
  AWS credentials (npm run bootstrap -- --stage <stage>), and prints the new owner key once.
  Running it again creates nothing.`;

/** The repository this command was built from: the bootstrap script lives there. */
function repositoryRoot(): string | undefined {
  for (let dir = path.dirname(process.argv[1] ?? '.'); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'scripts', 'bootstrap.ts'))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}

function runDeployedBootstrap(stage: string, region: string | undefined): Promise<number> {
  const root = repositoryRoot();
  if (!root) throw new UsageError('bootstrap --stage runs from a checkout of the gateway repository (it needs serverless.yml and scripts/bootstrap.ts).');
  const args = ['run', '--silent', 'bootstrap', '--', '--stage', stage, ...(region ? ['--region', region] : [])];
  return new Promise((resolve, reject) => {
    const child = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { cwd: root, stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code === 0 ? 0 : 1));
  });
}

export function bootstrapCommand(program: Command): void {
  program
    .command('bootstrap')
    .description('the first owner key: check a local gateway, or create the key of a deployed stage (--stage)')
    .option('--stage <stage>', 'a deployed stage to bootstrap with your AWS credentials')
    .option('--region <region>', 'the stage’s AWS region (default AWS_REGION or serverless.yml’s)')
    .addHelpText('after', help)
    .action(async (options, self: Command) => {
      if (options.stage) {
        process.exitCode = await runDeployedBootstrap(options.stage, options.region);
        return;
      }
      if (options.region) throw new UsageError('--region goes with --stage.');
      const { client, output } = await contextOf(self);
      const globals = self.optsWithGlobals<{ key?: string; keyFile?: string }>();
      const hasKey = Boolean(globals.key ?? globals.keyFile ?? process.env.GATEWAY_API_KEY);
      if (!hasKey) {
        // Without a key the gateway can only be asked whether it answers at all: an unauthenticated read does that.
        await new GatewayClient(client.base, 'gwk_unset').request('GET', '/workspaces').catch((error) => {
          if (error?.name !== 'ApiError') throw error;
        });
        output.out(`The gateway at ${client.base} is up. Its first start printed the owner key; pass it with --key or GATEWAY_API_KEY.`);
        output.out(
          'Lost it? Restart the gateway with GATEWAY_ADMIN_KEY set to a key of your choosing (20 to 256 characters): it is installed as an owner key.',
        );
        return;
      }
      const workspaces = await client.request('GET', '/workspaces');
      const names = (workspaces.data ?? []).map((workspace: { id: string; name: string }) => `${workspace.name} (${workspace.id})`);
      if (output.json) return output.out(JSON.stringify({ url: client.base, bootstrapped: true, workspaces: workspaces.data }, null, 2));
      output.out(
        `The gateway at ${client.base} is bootstrapped and accepts this key; it sees ${names.length === 1 ? 'workspace' : 'workspaces'} ${names.join(', ')}.`,
      );
    });
}
