import '../lib/local/sdk-node-notice';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ensureBootstrap, revokedAdminKeyWarning } from '../lib/auth/bootstrap';
import { loadServerlessConfig } from '../lib/local/template/serverless-config';

/**
 * `npm run bootstrap -- --stage <stage> [--region <region>]`: creates the organisation, the default
 * workspace and the first admin key in a deployed stack, with the deployer's AWS credentials and the
 * same code the local first start runs. Prints the key once; running it again changes nothing.
 */
async function main(): Promise<void> {
  const { values } = parseArgs({ options: { stage: { type: 'string' }, region: { type: 'string' } } });
  if (!values.stage) throw new Error('Usage: npm run bootstrap -- --stage <stage> [--region <region>]');
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const config = loadServerlessConfig({ file: path.join(root, 'serverless.yml'), stage: values.stage, region: values.region ?? process.env.AWS_REGION });
  const tableName = config.resources.ControlTable?.Properties?.TableName;
  if (typeof tableName !== 'string') throw new Error('serverless.yml declares no ControlTable with a TableName');
  process.env.GATEWAY_CONTROL_TABLE = tableName;
  process.env.AWS_REGION = config.region;

  const result = await ensureBootstrap({ adminKey: process.env.GATEWAY_ADMIN_KEY || undefined });
  if (result.revokedAdminKey) process.stderr.write(`${revokedAdminKeyWarning(result.revokedAdminKey)}\n`);
  if (result.createdAdminKey) {
    process.stdout.write(`Bootstrapped stage ${values.stage} (organisation ${result.organisationId}, workspace ${result.workspaceId}).\n`);
    process.stdout.write(`Owner API key (shown once; store it now): ${result.createdAdminKey}\n`);
  } else {
    process.stdout.write(`Stage ${values.stage} was already bootstrapped (workspace ${result.workspaceId}); no new key was created.\n`);
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
