/**
 * Errors the gateway answers with. Every error body has the OpenAI shape
 * `{"error":{"message","type","param","code"}}`; provider errors on unified routes add `provider`.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'timeout_error'
  | 'conflict_error'
  | 'rate_limit_error'
  | 'provider_error'
  | 'server_error';

export interface ErrorBody {
  error: {
    message: string;
    type: string;
    param: string | null;
    code: string | null;
    provider?: string;
    /** Every violation, when the error reports several (e.g. config validation). */
    issues?: ErrorIssue[];
  };
}

/** One of several problems an error reports: the offending parameter's path and what is wrong. */
export interface ErrorIssue {
  param: string;
  message: string;
}

export interface GatewayErrorOptions {
  type?: ErrorType | (string & {});
  param?: string | null;
  code?: string | null;
  provider?: string;
  headers?: Record<string, string>;
  cause?: unknown;
  /** Listed in the body as `error.issues`. */
  issues?: ErrorIssue[];
}

const defaultTypeByStatus: Record<number, ErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  431: 'invalid_request_error',
  502: 'provider_error',
  504: 'timeout_error',
};

/** An error with an HTTP status whose message is safe to show to the caller. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  readonly provider: string | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly issues: ErrorIssue[] | undefined;

  constructor(status: number, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.status = status;
    this.type = options.type ?? defaultTypeByStatus[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.provider = options.provider;
    this.headers = options.headers;
    this.issues = options.issues;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
    if (this.provider !== undefined) body.error.provider = this.provider;
    if (this.issues !== undefined) body.error.issues = this.issues;
    return body;
  }
}

export const badRequest = (message: string, param: string | null = null, code: string | null = null) => new GatewayError(400, message, { param, code });

export const unauthorized = (message: string) => new GatewayError(401, message, { code: 'invalid_api_key' });

export const forbidden = (message: string) => new GatewayError(403, message, { code: 'forbidden' });

export const notFound = (message: string, code = 'not_found') => new GatewayError(404, message, { code });

/** Turns anything thrown into a GatewayError; unknown errors become a generic 500 that hides details. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return new GatewayError(500, 'The gateway hit an internal error. The request was not completed; it is safe to retry.', {
    code: 'internal_error',
    cause: error,
  });
}
