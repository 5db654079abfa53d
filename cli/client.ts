import { ApiError, UnreachableError, UsageError } from './errors';

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
}

/** The gateway's local address, as `npm start` prints it. */
export const defaultGatewayUrl = 'http://localhost:8787/v1';

const requestTimeoutMs = 60_000;

/**
 * The base URL every route hangs off: people paste the gateway's address with or without `/v1`
 * (the deployed stage URL, the local one), and both mean the same API.
 */
export function apiBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url must be an http(s) URL such as ${defaultGatewayUrl}; got "${url}".`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`--url must be an http(s) URL; got "${url}".`);
  const trimmed = `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
}

/** The control routes over HTTP, nothing else: the gateway enforces every rule itself. */
export class GatewayClient {
  readonly base: string;

  constructor(
    url: string,
    private readonly key: string | undefined,
  ) {
    this.base = apiBase(url);
  }

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    if (!this.key) throw new UsageError('No gateway API key: pass --key, or set GATEWAY_API_KEY (an admin or owner key for most commands).');
    const url = new URL(`${this.base}${path}`);
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { ...options.headers, 'x-gateway-api-key': this.key, accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(requestTimeoutMs),
      });
    } catch (error) {
      throw new UnreachableError(
        `Cannot reach the gateway at ${this.base}: ${reason(error)}. Is it running (npm start locally), and are --url or GATEWAY_URL right?`,
      );
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (!response.ok) throw refusal(response, parsed, text);
    if (parsed === undefined && text.length > 0)
      throw new ApiError(`The gateway answered something that is not JSON: ${text.slice(0, 200)}`, response.status, null, null);
    return parsed as T;
  }
}

function reason(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${requestTimeoutMs / 1000} seconds`;
  // fetch reports every network failure as "fetch failed"; what went wrong is in its cause.
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  if (cause?.code) return `${cause.code}${cause.message && !cause.message.includes(cause.code) ? ` (${cause.message})` : ''}`;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function refusal(response: Response, parsed: unknown, text: string): ApiError {
  const error = (parsed as { error?: { message?: unknown; code?: unknown; param?: unknown; type?: unknown } } | undefined)?.error;
  if (error && typeof error === 'object') {
    const code = typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : null;
    const message = typeof error.message === 'string' ? error.message : `The gateway refused the request.`;
    return new ApiError(message, response.status, code, typeof error.param === 'string' ? error.param : null);
  }
  // API Gateway and proxies in front of it answer some errors in their own shapes.
  const message = (parsed as { message?: unknown } | undefined)?.message;
  const summary = typeof message === 'string' ? message : text.trim().slice(0, 200) || response.statusText || 'no message';
  return new ApiError(summary, response.status, null, null);
}
