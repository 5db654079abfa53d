import { readBody } from '../core/read-body';
import { sendOutbound } from '../outbound/http-client';

/**
 * The network checks' one way out: the gateway's guarded outbound client (no loopback, private or
 * metadata addresses unless the operator allows them; no redirects), with a deadline that covers the
 * whole exchange, the request's own abort, and a bounded answer.
 */

export const maxAnswerBytes = 1_000_000;

export interface OutboundAnswer {
  status: number;
  text: string;
}

/** Runs `work` with a signal that fires after `timeoutMs` or when `outer` does; the error says which. */
async function withDeadline<T>(what: string, timeoutMs: number, outer: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onOuterAbort = () => controller.abort();
  if (outer?.aborted) controller.abort();
  else outer?.addEventListener('abort', onOuterAbort, { once: true });
  try {
    return await work(controller.signal);
  } catch (error) {
    if (timedOut) throw new Error(`${what} did not answer within ${timeoutMs} ms.`);
    if (outer?.aborted) throw new Error(`The request was abandoned before ${what.charAt(0).toLowerCase()}${what.slice(1)} answered.`);
    throw new Error(`${what} could not be called: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuterAbort);
  }
}

/** Sends a request and reads the whole answer as text. `what` names the other end in error messages. */
export function callOutbound(options: {
  what: string;
  url: URL;
  method: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  signal?: AbortSignal;
}): Promise<OutboundAnswer> {
  const { what, url, method, timeoutMs, signal } = options;
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] = 'application/json';
  }
  return withDeadline(what, timeoutMs, signal, async (deadline) => {
    const response = await sendOutbound({ url, method, headers, body, target: what, signal: deadline });
    if (method === 'HEAD') {
      response.body.resume();
      return { status: response.status, text: '' };
    }
    const bytes = await readBody(response.body, maxAnswerBytes, `The answer of ${what}`);
    return { status: response.status, text: bytes.toString('utf8') };
  });
}

/** The answer parsed as JSON; a non-2xx status or a body that is not JSON is an error naming the endpoint. */
export async function callForJson(options: Parameters<typeof callOutbound>[0]): Promise<unknown> {
  const answer = await callOutbound(options);
  if (answer.status < 200 || answer.status > 299)
    throw new Error(`${options.what} answered with status ${answer.status}${answer.text ? `: ${answer.text.slice(0, 200)}` : '.'}`);
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new Error(`${options.what} answered with a body that is not JSON: ${answer.text.slice(0, 200)}`);
  }
}
