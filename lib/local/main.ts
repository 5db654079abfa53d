import './sdk-node-notice';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { revokedAdminKeyWarning } from '../auth/bootstrap';
import { startLocalRuntime } from './runtime';
import { stopWhenTold } from './stop-when-told';

/**
 * From the signal to the exit, at most this long: `npm start` stops within 5 s of a SIGTERM or a
 * Ctrl-C, with room left for npm and the log worker to exit after the gateway.
 */
const stopDeadlineMs = 4_000;

/**
 * `npm start`: the gateway on http://localhost:8787/v1 with its own emulators and data under
 * `.gateway/`. Environment: PORT, HOST, GATEWAY_DATA_DIR, GATEWAY_ADMIN_KEY,
 * GATEWAY_DYNAMODB_ENDPOINT, GATEWAY_SQS_ENDPOINT, GATEWAY_S3_ENDPOINT, and for the queue workers
 * GATEWAY_LOCAL_QUEUE_CONCURRENCY and GATEWAY_LOCAL_QUEUE_VISIBILITY_SECONDS.
 */
/** A setting given as a positive number, or undefined (the default applies) for anything else. */
function positiveNumber(value: string | undefined): number | undefined {
  const number = Number(value);
  return value && Number.isFinite(number) && number > 0 ? number : undefined;
}

async function main(): Promise<void> {
  // This file is bundled to .build/local/main.mjs; the project root is two levels up.
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const starting = startLocalRuntime({
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
    queueConcurrency: positiveNumber(process.env.GATEWAY_LOCAL_QUEUE_CONCURRENCY),
    queueVisibilitySeconds: positiveNumber(process.env.GATEWAY_LOCAL_QUEUE_VISIBILITY_SECONDS),
  });
  // Told to stop while still starting, the gateway finishes starting first (within the deadline):
  // the first start writes the organisation, then its key, and a process that died in between
  // would leave an organisation without a key. The handlers are in place before anything is written.
  let stopping = false;
  stopWhenTold({
    name: 'gateway',
    deadlineMs: stopDeadlineMs,
    stop: async () => {
      stopping = true;
      await (await starting).stop();
    },
  });
  const runtime = await starting;
  // A key created by this start is printed even when stopping: it is shown nowhere else.
  if (runtime.bootstrap.createdAdminKey) {
    process.stdout.write(
      `\nCreated the organisation, its default workspace and its first owner API key.\n` +
        `Owner API key (shown once; store it now): ${runtime.bootstrap.createdAdminKey}\n\n`,
    );
  }
  if (runtime.bootstrap.revokedAdminKey) process.stderr.write(`\n${revokedAdminKeyWarning(runtime.bootstrap.revokedAdminKey)}\n\n`);
  if (!stopping) process.stdout.write(`LLM gateway listening on ${runtime.url}\n`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
