import type { Readable } from 'node:stream';
import type { GatewayError } from '../core/errors';

/** What one provider call came to. A failure carries what to answer if nothing else is tried. */
export type AttemptOutcome =
  | { ok: true; status: number; headers: Record<string, string>; body: Readable | Buffer | string }
  | {
      ok: false;
      status: number;
      headers: Record<string, string>;
      error: GatewayError;
      network: boolean;
      /** The provider's own error body, answered as it came (pass-through). */
      raw?: Buffer;
    };
