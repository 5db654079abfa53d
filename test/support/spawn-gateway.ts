import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from './repo-root';

export interface SpawnedGateway {
  /** Base URL including `/v1`. */
  url: string;
  process: ChildProcess;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /** Everything the process printed on stderr so far. */
  errors(): string;
  stop(): Promise<void>;
}

/**
 * Starts the local gateway exactly as `npm start` does (the built `.build/local/main.mjs`), on a free
 * port, with the given environment. Several may share one set of emulators through the
 * `GATEWAY_*_ENDPOINT` variables.
 */
export async function spawnGateway(env: Record<string, string | undefined>): Promise<SpawnedGateway> {
  const child = spawn(process.execPath, [path.join(repoRoot, '.build', 'local', 'main.mjs')], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
    if (process.env.GATEWAY_TEST_VERBOSE) process.stderr.write(text);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Gateway did not start within 30 s.\nstdout: ${stdout}\nstderr: ${stderr}`)), 30_000);
    const check = () => {
      const match = /listening on (http:\/\/\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Gateway exited with code ${code} before it was ready.\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
  return {
    url,
    process: child,
    output: () => stdout,
    errors: () => stderr,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
}
