import { forgetKey, savedKey } from './key-store';

/** Sent on the window when the gateway refuses the key; its detail is the gateway's message. */
export const keyRefused = 'gateway-key-refused';

/** An answer other than 2xx, with the gateway's own message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The API beside the page: the page is `<base>/console`, the API `<base>/v1/…`, whatever stage
 * prefix `<base>` is (none locally, `/<stage>` on API Gateway).
 */
export function apiUrl(path: string, query: Record<string, string | undefined> = {}): string {
  const url = new URL(`v1/${path}`, location.href);
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') url.searchParams.set(name, value);
  return url.toString();
}

/** GET of a JSON answer, with the tab's key. */
export async function getJson<T = any>(path: string, query: Record<string, string | undefined> = {}): Promise<T> {
  const key = savedKey();
  if (!key) throw new ApiError(401, 'Not signed in.');
  const response = await fetch(apiUrl(path, query), { headers: { 'x-gateway-api-key': key }, credentials: 'omit', cache: 'no-store' });
  const body = await response.json().catch(() => null);
  const message = body?.error?.message ?? `${response.status} ${response.statusText}`;
  // A key refused now (revoked, its workspace archived) is forgotten, whichever view asked.
  if (response.status === 401) {
    forgetKey();
    dispatchEvent(new CustomEvent(keyRefused, { detail: message }));
  }
  if (!response.ok) throw new ApiError(response.status, message);
  return body as T;
}

/** Path segments are ids the API hands out, sent back as one segment each. */
export const segment = (id: string) => encodeURIComponent(id);
