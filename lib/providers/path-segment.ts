import { badRequest } from '../core/errors';

/**
 * A value from the request — a model id, a deployment name — as one segment of a provider URL's
 * path. URL parsers resolve `.` and `..` segments, so such a value would move the call to another
 * path of the provider's API (`/model/../converse` is `/converse`): it is refused, as pass-through
 * refuses dot segments. Everything else is percent-encoded into the one segment.
 */
export function pathSegment(value: string, param: string, encode: (value: string) => string = encodeURIComponent): string {
  if (value === '.' || value === '..') {
    throw badRequest(`${param} cannot be "${value}": a dot segment would change the path of the provider's URL.`, param, 'invalid_value');
  }
  return encode(value);
}
