import { PassThrough } from 'node:stream';
import { toGatewayError, type GatewayError } from '../../core/errors';
import { sseData, sseDone } from '../../wire/sse';
import type { GatewayResponse } from '../types';
import { isReadable } from '../../core/readable';
import { cacheStatusHeader } from './routed-response';
import type { InferenceContext, InferenceResult } from '../../inference/context';

const heartbeatMs = 15_000;

/** How long a streamed request's status is held while routing looks for a provider's first chunk. */
export function streamCommitDelayMs(): number {
  return Number(process.env.GATEWAY_STREAM_COMMIT_MS ?? 10_000);
}

/**
 * Holds a streamed request's status until routing has a first chunk, so a provider that fails
 * before it can still be retried or fallen back from. If that takes longer than `delayMs`, commits
 * 200 and keeps the connection alive with SSE comments while routing goes on; then relays the
 * stream, or ends with `errorEvent` (by default an error event and `[DONE]`) when every target
 * failed. Resolves undefined when routing finished in time (the caller answers normally).
 */
export async function commitStreamWhileRouting(
  routing: Promise<InferenceResult>,
  context: InferenceContext,
  delayMs: number,
  errorEvent: (error: GatewayError) => string = chatErrorEvent,
): Promise<GatewayResponse | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'commit'>((resolve) => (timer = setTimeout(() => resolve('commit'), delayMs)));
  const first = await Promise.race([
    routing.then(
      () => 'routed' as const,
      () => 'routed' as const,
    ),
    waited,
  ]);
  clearTimeout(timer);
  if (first === 'routed') return undefined;

  const { recorder } = context;
  const body = new PassThrough();
  body.write(': waiting for the provider\n\n');
  const heartbeat = setInterval(() => body.write(': keep-alive\n\n'), heartbeatMs);
  body.on('close', () => clearInterval(heartbeat));
  routing.then(
    (result) => {
      clearInterval(heartbeat);
      const { outcome } = result;
      if (outcome.ok && isReadable(outcome.body)) {
        const upstream = outcome.body;
        body.on('close', () => upstream.destroy());
        upstream.pipe(body);
      } else if (outcome.ok) {
        body.end(outcome.body);
      } else {
        recorder.failed(outcome.error);
        body.end(errorEvent(outcome.error));
      }
    },
    (error) => {
      clearInterval(heartbeat);
      const gatewayError = toGatewayError(error);
      recorder.failed(gatewayError);
      body.end(errorEvent(gatewayError));
    },
  );
  return {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...cacheStatusHeader(context.cacheStatus) },
    body,
  };
}

/** How a chat or completions stream ends in failure: an error event, then `[DONE]`. */
function chatErrorEvent(error: GatewayError): string {
  return sseData(JSON.stringify(error.toBody())) + sseDone;
}
