import type { Readable } from 'node:stream';
import { GatewayError } from '../core/errors';

/** Reads a whole body, refusing to hold more than `limit` bytes. (Events, not an async iterator: cheaper per call.) */
export function readBody(stream: Readable, limit: number, what: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (stream.destroyed) {
      reject(stream.errored ?? Object.assign(new Error('The body ended before it was complete.'), { code: 'ECONNRESET' }));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stream.off('data', onData);
        stream.destroy();
        reject(new GatewayError(502, `${what} is larger than ${limit} bytes.`, { code: 'provider_response_too_large' }));
        return;
      }
      chunks.push(chunk);
    };
    stream.on('data', onData);
    stream.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)));
    stream.once('error', reject);
    stream.once('close', () => {
      if (!stream.readableEnded) reject(Object.assign(new Error('The body ended before it was complete.'), { code: 'ECONNRESET' }));
    });
  });
}
