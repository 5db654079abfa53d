// Catching the GatewayError a piece of gateway code throws, for tests that look at its status, param or code.
import { expect } from 'vitest';
import { GatewayError } from '../../lib/core/errors';

/** The GatewayError that `run` throws; fails the test if it throws something else or nothing. */
export function thrownGatewayError(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a GatewayError');
}

/** The GatewayError that a promise rejects with, or that a function throws or rejects with; fails the test otherwise. */
export async function rejectedGatewayError(promise: Promise<unknown> | (() => unknown)): Promise<GatewayError> {
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a GatewayError');
}
