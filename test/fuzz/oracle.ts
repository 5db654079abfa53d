/**
 * What every answer of the gateway must satisfy, whatever it was sent (docs/api.md: Errors,
 * Pass-through; docs/security.md; docs/routing.md: Streams). `judge` lists what is wrong with one answer; an empty list is a pass.
 */
import { isBrokenFault, isStallFault, type Fault } from './fuzz-upstream';
import { asksForStream, faultsOf, keyKindOf, requestTimeoutOf, unifiedFamilies, type FuzzRequest } from './requests';
import type { RawOutcome } from './raw-client';

/** Longest any request may take to be answered completely. */
export const requestDeadlineMs = 15_000;

/** The time a request gets: 15 s, or far less when it relies on a small request timeout to end. */
export function deadlineOf(request: FuzzRequest): number {
  const stalls = faultsOf(request).some(isStallFault);
  if (!stalls) return Math.min(requestDeadlineMs, request.deadlineMs ?? requestDeadlineMs);
  const timeout = requestTimeoutOf(request);
  if (timeout === undefined || request.stallAttempts < 1) {
    throw new Error('Generator bug: a request with a stall fault needs one x-gateway-request-timeout and a known number of attempts.');
  }
  return Math.min(requestDeadlineMs, request.stallAttempts * (timeout + 300) + 3_000);
}

/**
 * Whether a 5xx can be the provider's doing: the request told the fake provider to fail (its own
 * status relayed, or a 502 for an answer that could not be read), or named a host that refuses
 * connections (502). A 5xx the gateway reports as its own internal error never is.
 */
function mayFailUpstream(request: FuzzRequest): boolean {
  return faultsOf(request).length > 0 || requestMentions(request, '{{refused}}');
}

function requestMentions(request: FuzzRequest, text: string): boolean {
  return (
    request.target.includes(text) ||
    request.headers.some(([, value]) => value.includes(text)) ||
    (request.body.kind === 'text' && request.body.text.includes(text))
  );
}

const passthroughFamilies = new Set(['passthrough', 'responses']);
const adminWrites = new Set(['configs', 'providers', 'api-keys']);

/** Node's own limit on the request head: above it the server refuses before the gateway sees anything. */
const nodeHeaderLimit = 16 * 1024;

function headBytes(request: FuzzRequest): number {
  return request.target.length + request.headers.reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
}

export function judge(request: FuzzRequest, outcome: RawOutcome, deadlineMs: number): string[] {
  const problems: string[] = [];
  if (outcome.failure === 'timeout') return [`hang: ${outcome.message}`];
  // A head above Node's limit is refused while the client may still be writing it, and the server's
  // close can then reset the connection before the answer is read; the answer, when it arrives, is
  // judged like any other.
  const resetMayLoseAnswer = headBytes(request) > nodeHeaderLimit;
  if (outcome.failure === 'no-answer') return resetMayLoseAnswer ? [] : [`no answer: the connection ended without a parseable response (${outcome.message})`];
  const status = outcome.status!;
  const head = request.method === 'HEAD';
  const faults: Fault[] = faultsOf(request);
  const relayed = outcome.headers['x-fuzz-upstream'] === '1';
  const unified = unifiedFamilies.has(request.family);
  const text = outcome.body.toString('utf8');
  const parsed = parseJson(text);

  if (outcome.failure === 'body-cut') {
    const providerBroke = passthroughFamilies.has(request.family) && relayed && faults.some(isBrokenFault);
    if (!providerBroke && !resetMayLoseAnswer) problems.push(`body cut: the answer (status ${status}) broke off: ${outcome.message}`);
  }
  if (outcome.elapsedMs > deadlineMs) problems.push(`slow: the answer took ${outcome.elapsedMs} ms, more than ${deadlineMs} ms`);

  if (status >= 500) {
    if (!mayFailUpstream(request)) problems.push(`server error: ${status} although no provider was told to fail`);
    else if (!relayed && errorCode(parsed) === 'internal_error')
      problems.push(`server error: ${status} internal_error (the gateway's own failure, not the provider's)`);
  }
  if (status >= 400 && !head && !relayed && outcome.failure === undefined && !isErrorBody(parsed)) {
    problems.push(`error shape: the ${status} answer is not {"error":{"message","type","param","code"}}: ${JSON.stringify(text.slice(0, 300))}`);
  }
  if (unified && status === 200 && !head && outcome.failure === undefined) {
    const contentType = String(outcome.headers['content-type'] ?? '');
    if (asksForStream(request)) {
      if (!contentType.startsWith('text/event-stream'))
        problems.push(`stream: a stream request got a 200 of content-type "${contentType}", not text/event-stream: ${JSON.stringify(text.slice(0, 200))}`);
      else if (!/data: \[DONE\]\s*$/.test(text)) problems.push(`stream: the event stream does not end with data: [DONE]: …${JSON.stringify(text.slice(-300))}`);
    } else if (!contentType.includes('json') || parsed === undefined || typeof parsed !== 'object' || parsed === null) {
      problems.push(`answer: a 200 that is not a JSON object (content-type "${contentType}"): ${JSON.stringify(text.slice(0, 200))}`);
    }
  }
  if (request.mustRefuse !== undefined && status < 400 && outcome.failure === undefined)
    problems.push(`refusal: ${request.mustRefuse}, yet the gateway answered ${status}`);
  const key = keyKindOf(request);
  if ((key === 'missing' || key === 'garbage') && status < 400) problems.push(`auth: answered ${status} to a request without a valid gateway key`);
  if (key === 'member' && adminWrites.has(request.family) && ['POST', 'PUT', 'DELETE'].includes(request.method) && status < 300) {
    problems.push(`auth: a member key was allowed ${request.method} on an admin route (${status})`);
  }
  return problems;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isErrorBody(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return false;
  const { message, type, param, code } = error as Record<string, unknown>;
  return (
    typeof message === 'string' && typeof type === 'string' && (param === null || typeof param === 'string') && (code === null || typeof code === 'string')
  );
}

function errorCode(body: unknown): unknown {
  return (body as { error?: { code?: unknown } } | undefined)?.error?.code;
}
