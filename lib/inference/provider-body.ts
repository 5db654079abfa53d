import type { Readable } from 'node:stream';
import { GatewayError } from '../core/errors';
import { readBody } from '../core/read-body';
import type { OutboundCall } from '../outbound/http-client';
import { streamIdleLimitMs, watchStreamIdle } from './stream-idle';

/**
 * The request timeout of one provider attempt: it runs from before the call until the caller stops
 * it (once a stream has started, or once a held body has been read), and when it runs out it aborts
 * the call it watches, so whatever was waiting on that call fails at once.
 */
export class AttemptTimeout {
  private timedOut = false;
  private call: OutboundCall | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly provider: string,
    readonly timeoutMs: number,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.call?.abort();
    }, timeoutMs);
  }

  /** True once the timeout has run out. */
  get expired(): boolean {
    return this.timedOut;
  }

  /** The provider call to abort when the timeout runs out. */
  watch(call: OutboundCall): void {
    this.call = call;
    if (this.timedOut) call.abort();
  }

  /** Aborts the watched call now (the timer keeps running until `stop`). */
  abort(): void {
    this.call?.abort();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /** The answer when the timeout ran out: 408 `timeout_error`, as for every gateway timeout. */
  error(): GatewayError {
    return new GatewayError(408, `${this.provider} did not answer within the request timeout of ${this.timeoutMs} ms.`, {
      code: 'timeout_error',
      provider: this.provider,
    });
  }
}

/**
 * A provider connection that broke while the gateway read an answer (cut before its length was
 * reached, reset, closed mid-chunk): a 502 that says so. GatewayErrors (a body above the limit) pass.
 */
export function providerConnectionError(provider: string, cause: unknown): GatewayError {
  if (cause instanceof GatewayError) return cause;
  const { code, message } = (cause ?? {}) as { code?: unknown; message?: unknown };
  const detail = [typeof code === 'string' ? code : undefined, typeof message === 'string' && message ? message : undefined].filter(Boolean).join(': ');
  return new GatewayError(502, `The connection to ${provider} broke before its answer was complete${detail ? ` (${detail})` : ''}.`, {
    code: 'provider_connection_broken',
    provider,
    cause,
  });
}

/**
 * Reads a provider body the gateway holds whole (an error body it must read to decide, a
 * non-streamed answer) under the attempt's timeout, and cuts it off, aborting the call, when it
 * stays silent for min(timeout, 240 s). Fails with the timeout's 408, or with a 502
 * `provider_connection_broken` when the connection breaks first; never with a bare socket error.
 */
export async function readProviderBody(body: Readable, timeout: AttemptTimeout, options: { limit: number; what: string; idleMs?: number }): Promise<Buffer> {
  const idleMs = options.idleMs ?? streamIdleLimitMs(timeout.timeoutMs);
  let stalled = false;
  watchStreamIdle(body, idleMs, () => {
    stalled = true;
    timeout.abort();
    // A call that was already over cannot be aborted; the body is given up either way.
    body.destroy();
  });
  try {
    return await readBody(body, options.limit, options.what);
  } catch (caught) {
    const { provider } = timeout;
    if (timeout.expired) {
      throw new GatewayError(408, `${provider} did not send its whole answer within the request timeout of ${timeout.timeoutMs} ms.`, {
        code: 'timeout_error',
        provider,
      });
    }
    if (stalled) {
      throw new GatewayError(408, `${provider} sent nothing for ${idleMs} ms while the gateway was reading its answer; the gateway ended the call.`, {
        code: 'timeout_error',
        provider,
      });
    }
    throw providerConnectionError(provider, caught);
  }
}

const networkFailureCodes = new Set(['timeout_error', 'provider_unreachable', 'provider_connection_broken', 'provider_stream_error']);

/**
 * A failure of the provider call itself rather than an answer: a timeout, or a connection that
 * could not be made or broke. Retried by default, and counted by circuit breakers.
 */
export function isNetworkFailure(error: GatewayError): boolean {
  return error.code !== null && networkFailureCodes.has(error.code);
}
