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
  const bytes = randomBytes(16);
  let random = '';
  for (let i = 0; i < 16; i++) random += alphabet[bytes[i] & 31];
  return `${prefix}_${time}${random}`;
}
