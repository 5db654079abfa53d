/**
 * A full garbage collection in another Node process, through its inspector (started with
 * `--inspect=127.0.0.1:0`): the Chrome DevTools protocol's `HeapProfiler.collectGarbage`. Used to
 * read a process's RSS without the garbage V8 has not collected yet, so a comparison of two
 * readings shows what the process keeps, not when V8 last happened to collect.
 */
import { WebSocket } from 'undici';

/** The inspector's WebSocket URL, from what the process printed on stderr ("Debugger listening on ws://…"). */
export function inspectorUrl(stderr: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1];
}

export async function collectGarbage(url: string, timeoutMs = 10_000): Promise<void> {
  const socket = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`No answer from the inspector at ${url} within ${timeoutMs} ms`)), timeoutMs);
      socket.addEventListener('open', () => socket.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' })));
      socket.addEventListener('message', (event) => {
        const reply = JSON.parse(String(event.data)) as { id?: number; error?: { message: string } };
        if (reply.id !== 1) return;
        clearTimeout(timer);
        if (reply.error) reject(new Error(`HeapProfiler.collectGarbage failed: ${reply.error.message}`));
        else resolve();
      });
      socket.addEventListener('error', () => {
        clearTimeout(timer);
        reject(new Error(`Could not reach the inspector at ${url}`));
      });
    });
  } finally {
    socket.close();
  }
}
