import './sdk-node-notice';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { revokedAdminKeyWarning } from '../auth/bootstrap';
import { startLocalRuntime } from './runtime';

/**
 * `npm start`: the gateway on http://localhost:8787/v1 with its own emulators and data under
 * `.gateway/`. Environment: PORT, HOST, GATEWAY_DATA_DIR, GATEWAY_ADMIN_KEY,
 * GATEWAY_DYNAMODB_ENDPOINT, GATEWAY_SQS_ENDPOINT, GATEWAY_S3_ENDPOINT.
 */
async function main(): Promise<void> {
  // This file is bundled to .build/local/main.mjs; the project root is two levels up.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const runtime = await startLocalRuntime({
    root,
    host: process.env.HOST ?? '127.0.0.1',
    port: Number(process.env.PORT ?? 8787),
    stage: process.env.GATEWAY_STAGE ?? 'local',
    dataDir: path.resolve(root, process.env.GATEWAY_DATA_DIR ?? '.gateway'),
    adminKey: process.env.GATEWAY_ADMIN_KEY || undefined,
    endpoints: {
      dynamodb: process.env.GATEWAY_DYNAMODB_ENDPOINT || undefined,
      sqs: process.env.GATEWAY_SQS_ENDPOINT || undefined,
      s3: process.env.GATEWAY_S3_ENDPOINT || undefined,
    },
    logFlushIntervalMs: process.env.GATEWAY_LOG_FLUSH_MS ? Number(process.env.GATEWAY_LOG_FLUSH_MS) : undefined,
  });
  if (runtime.bootstrap.createdAdminKey) {
    process.stdout.write(
      `\nCreated the organisation, its default workspace and the first admin API key.\n` +
        `Admin API key (shown once; store it now): ${runtime.bootstrap.createdAdminKey}\n\n`,
    );
  }
  if (runtime.bootstrap.revokedAdminKey) process.stderr.write(`\n${revokedAdminKeyWarning(runtime.bootstrap.revokedAdminKey)}\n\n`);
  process.stdout.write(`LLM gateway listening on ${runtime.url}\n`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await runtime.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
