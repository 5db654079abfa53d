// A stand-in for the logIngest bundle, for log sink tests: the log worker imports it as it imports
// the real bundle. It appends every line it is handed to FAKE_LOG_INGEST_FILE, notes each worker
// start in `<file>.starts`, and kills its worker on lines that ask for it.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const file = process.env.FAKE_LOG_INGEST_FILE;
appendFileSync(`${file}.starts`, `${Date.now()}\n`);

function die() {
  process.kill(process.pid, 'SIGKILL');
  return new Promise(() => undefined);
}

export async function handler(event) {
  const { logEvents } = JSON.parse(gunzipSync(Buffer.from(event.awslogs.data, 'base64')).toString('utf8'));
  for (const { message } of logEvents) {
    if (message === 'crash-always') await die();
    if (message === 'crash-once' && !existsSync(`${file}.crashed`)) {
      writeFileSync(`${file}.crashed`, '');
      await die();
    }
  }
  appendFileSync(file, logEvents.map(({ message }) => `${message}\n`).join(''));
  return { stored: logEvents.length, skipped: 0 };
}
