import * as crypto from 'node:crypto';

// `crypto.hash` hashes in one call without a Hash object (several times cheaper for short inputs);
// it exists from Node 20.12 on, and createHash stands in where it does not.
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Buffer, encoding: 'hex') => string }).hash;

/** SHA-256 of a UTF-8 string (or of bytes), as lower-case hex. */
export function sha256Hex(text: string | Buffer): string {
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}
