import type { Readable } from 'node:stream';

/**
 * The longest a streamed answer may stay silent: under API Gateway's 5-minute idle limit for
 * streamed responses, so the gateway ends the stream itself (and frees the function) first.
 */
export const maxStreamIdleMs = 240_000;

/** How long a stream may stay silent for a request whose per-attempt timeout is `timeoutMs`. */
export function streamIdleLimitMs(timeoutMs: number): number {
  return Math.min(timeoutMs, maxStreamIdleMs);
}

/**
 * Calls `onIdle` once when `body` delivers nothing for `idleMs` while its reader wants more; stops
 * watching when the body ends, fails or closes. A body paused because its reader is behind (the
 * client reads slowly) is not silent. Each chunk only stamps the time: the timer re-arms itself.
 */
export function watchStreamIdle(body: Readable, idleMs: number, onIdle: () => void): void {
  let lastData = Date.now();
  const onData = () => {
    lastData = Date.now();
  };
  const check = () => {
    const now = Date.now();
    if (body.readableFlowing === false) lastData = now;
    const silentMs = now - lastData;
    if (silentMs < idleMs) {
      timer = setTimeout(check, idleMs - silentMs);
      return;
    }
    stop();
    onIdle();
  };
  let timer = setTimeout(check, idleMs);
  const stop = () => {
    clearTimeout(timer);
    body.off('data', onData);
    body.off('end', stop);
    body.off('error', stop);
    body.off('close', stop);
  };
  body.on('data', onData);
  body.once('end', stop);
  body.once('error', stop);
  body.once('close', stop);
}
