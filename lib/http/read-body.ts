import type { Readable } from 'node:stream';
import { GatewayError } from './errors';

/** Reads a whole body, refusing to hold more than `limit` bytes. */
export async function readBody(stream: Readable, limit: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > limit) {
      stream.destroy();
      throw new GatewayError(502, `${what} is larger than ${limit} bytes.`, { code: 'provider_response_too_large' });
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}
