import { PassThrough, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { maxStreamIdleMs, streamIdleLimitMs, watchStreamIdle } from '../../lib/inference/stream-idle';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stream idle watch', () => {
  it('caps the silence a stream may keep under API Gateway’s 5-minute idle limit', () => {
    expect(streamIdleLimitMs(2_000)).toBe(2_000);
    expect(streamIdleLimitMs(10 * 60_000)).toBe(maxStreamIdleMs);
    expect(maxStreamIdleMs).toBeLessThan(5 * 60_000);
  });

  it('fires once after the body has been silent for the limit, not while data keeps coming', async () => {
    const body = new PassThrough();
    body.resume();
    let fired = 0;
    watchStreamIdle(body, 80, () => fired++);
    for (let i = 0; i < 6; i++) {
      body.write('x');
      await sleep(40);
    }
    expect(fired).toBe(0);
    await sleep(150);
    expect(fired).toBe(1);
    await sleep(150);
    expect(fired).toBe(1);
  });

  it('does not count a body its reader has paused (a slow client) as silent', async () => {
    const body = new PassThrough({ highWaterMark: 1 });
    const slowReader = new Writable({ highWaterMark: 1, write: () => undefined }); // never calls back: always behind
    body.pipe(slowReader);
    let fired = 0;
    watchStreamIdle(body, 50, () => fired++);
    body.write('a');
    body.write('b');
    await sleep(200);
    expect(body.readableFlowing).toBe(false);
    expect(fired).toBe(0);
  });

  it('stops watching when the body ends', async () => {
    const body = new PassThrough();
    body.resume();
    let fired = 0;
    watchStreamIdle(body, 40, () => fired++);
    body.end('done');
    await sleep(120);
    expect(fired).toBe(0);
  });
});
