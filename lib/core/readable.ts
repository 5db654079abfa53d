import type { Readable } from 'node:stream';

/** True for a body that is a stream (to be piped as it comes) rather than bytes or text. */
export function isReadable(body: unknown): body is Readable {
  return typeof body === 'object' && body !== null && 'pipe' in body;
}
