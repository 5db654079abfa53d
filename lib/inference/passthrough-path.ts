import { badRequest } from '../core/errors';

const pathRule =
  'A pass-through path must stay under the provider base URL: it may not contain a "." or ".." segment (raw or percent-encoded, at any level of encoding) or a backslash.';

/**
 * The provider-relative path, encoded for the wire. API Gateway hands over the path decoded, so a
 * `%2e%2e%2f` the client sent arrives as `../`: a segment that is, or decodes to, a dot segment is
 * refused rather than resolved.
 */
export function passthroughPath(proxyPath: string): string {
  const segments = proxyPath.split('/');
  if (segments.some(escapesBase)) throw badRequest(pathRule, 'path', 'invalid_path');
  return segments.map(encodePathSegment).join('/');
}

/** `{base URL}/{path}?{query}`, which must still lie under the base path (whatever decoding came before). */
export function passthroughUrl(baseUrl: string, path: string, rawQuery: string): URL {
  const url = new URL(`${baseUrl}/${path}${rawQuery ? `?${rawQuery}` : ''}`);
  const base = new URL(baseUrl);
  const basePath = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
  if (url.origin !== base.origin || !url.pathname.startsWith(basePath)) throw badRequest(pathRule, 'path', 'invalid_path');
  return url;
}

/** A segment that is a dot segment or holds a path separator once decoded (as often as it decodes). */
function escapesBase(segment: string): boolean {
  let decoded = segment;
  for (let round = 0; round < 8; round++) {
    if (decoded.includes('\\') || decoded.split('/').some((part) => part === '.' || part === '..')) return true;
    if (!decoded.includes('%')) return false;
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      return false; // Not an escape sequence: it is sent encoded, as literal characters.
    }
    if (next === decoded) return false;
    decoded = next;
  }
  return true;
}

/** Re-encodes a decoded path segment, keeping the characters paths may hold as they are. */
function encodePathSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/%(3A|40|21|24|26|27|28|29|2A|2B|2C|3B|3D)/g, (escaped) => decodeURIComponent(escaped));
}
