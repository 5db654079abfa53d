import type { Readable } from 'node:stream';

/** A request as the gateway sees it, whatever carried it (API Gateway on AWS, the local server). */
export interface GatewayRequest {
  method: string;
  /** Path without the stage, e.g. `/v1/chat/completions`. */
  path: string;
  /** Query string without `?`, re-encoded from the event's parameters. */
  rawQuery: string;
  query: Record<string, string>;
  /** Header names lower-cased; a repeated header keeps its last value, as in API Gateway's `headers`. */
  headers: Record<string, string>;
  /** The API Gateway resource the request matched, as serverless.yml names it, e.g. `/v1/api-keys/{keyId}`. */
  resource: string;
  pathParameters: Record<string, string>;
  body: Buffer;
  /** API Gateway's request id. */
  requestId: string;
  /** Epoch milliseconds when the gateway received the request. */
  receivedAt: number;
}

/** What a route answers. A Readable body is streamed as it is produced. */
export interface GatewayResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer | Readable;
}
