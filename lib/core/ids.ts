import { randomBytes } from 'node:crypto';

const alphabet = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower-case

/**
 * A time-sortable id: `<prefix>_` + 10 characters of millisecond time + 16 random characters.
 * Ids compare in creation order as strings, which is what newest-first listings rely on.
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const bytes = randomSlice(16);
  let random = '';
  for (let i = 0; i < 16; i++) random += alphabet[bytes[i] & 31];
  return `${prefix}_${time}${random}`;
}

// Random bytes are drawn in blocks: one call to the generator per 256 ids rather than one per id.
let pool = Buffer.alloc(0);
let offset = 0;

function randomSlice(size: number): Buffer {
  if (offset + size > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  const slice = pool.subarray(offset, offset + size);
  offset += size;
  return slice;
}
