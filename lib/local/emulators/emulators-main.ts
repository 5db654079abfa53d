/**
 * Runs the local emulators in a process of their own, so several gateway processes (tests, the
 * benchmark) can share one set of DynamoDB/SQS/S3 state:
 *
 *   node --import tsx lib/local/emulators/emulators-main.ts [--data-dir <dir>] [--host <host>]
 *        [--dynamodb-port <n>] [--sqs-port <n>] [--s3-port <n>]
 *
 * The data directory defaults to `GATEWAY_DATA_DIR`, else `.gateway`. When the emulators listen,
 * ONE JSON line goes to stdout: {"dynamodb":"http://127.0.0.1:…","sqs":"…","s3":"…"}; pass those
 * to the gateways as GATEWAY_DYNAMODB_ENDPOINT, GATEWAY_SQS_ENDPOINT and GATEWAY_S3_ENDPOINT.
 * Stops cleanly, within 5 s, on SIGTERM/SIGINT/SIGHUP, when the parent goes away if started with
 * an IPC channel, and when its parent exits under an npm script (see stop-when-told.ts). Errors go
 * to stderr with exit code 1.
 */
import '../sdk-node-notice';
import { parseArgs } from 'node:util';
import { stopWhenTold } from '../stop-when-told';
import { startEmulators, type RunningEmulators } from './emulators';

// The emulators' servers cut busy connections after 2 s (listen.ts): well inside this.
const stopDeadlineMs = 4_000;

function port(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65535) throw new Error(`${flag} must be a port number, got '${value}'`);
  return parsed;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      'dynamodb-port': { type: 'string' },
      'sqs-port': { type: 'string' },
      's3-port': { type: 'string' },
    },
  });
  const dataDir = values['data-dir'] ?? positionals[0] ?? process.env.GATEWAY_DATA_DIR ?? '.gateway';

  const emulators: RunningEmulators = await startEmulators({
    dataDir,
    host: values.host,
    ports: {
      dynamodb: port(values['dynamodb-port'], '--dynamodb-port'),
      sqs: port(values['sqs-port'], '--sqs-port'),
      s3: port(values['s3-port'], '--s3-port'),
    },
  });

  const stop = stopWhenTold({ name: 'emulators', deadlineMs: stopDeadlineMs, stop: () => emulators.stop() });
  if (process.send) process.on('disconnect', () => stop('parent disconnect'));

  process.stdout.write(`${JSON.stringify(emulators.endpoints)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`emulators: ${String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
});
