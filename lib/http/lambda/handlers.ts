import { Readable } from 'node:stream';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { runRoute, type RouteHandler } from '../pipeline';
import { toGatewayRequest } from './event';

/**
 * A Lambda handler for a route that streams its response (API Gateway response transfer mode
 * STREAM): the status and headers go out first, then the body as it is produced.
 */
export function streamingHandler(route: RouteHandler) {
  // Deferred work of an invocation finishes after the body is streamed, before the invocation ends.
  const deferred = new WeakMap<object, Promise<unknown>[]>();
  const requestEnd = async (request: { context: object }) => {
    const work = deferred.get(request.context);
    if (work) await Promise.allSettled(work);
  };
  return middy<APIGatewayProxyEvent, unknown>({ streamifyResponse: true, timeoutEarlyInMillis: 0, requestEnd }).handler(async function streamRoute(event, context) {
    const response = await runRoute(toGatewayRequest(event), route, (work) => {
      const list = deferred.get(context) ?? [];
      list.push(work);
      deferred.set(context, list);
    });
    const body = typeof response.body === 'string' || Buffer.isBuffer(response.body) ? Readable.from([response.body]) : response.body;
    return { statusCode: response.status, headers: response.headers, body };
  });
}

/** A Lambda handler for a buffered route (control routes: JSON in, JSON out, 29 s at most). */
export function bufferedHandler(route: RouteHandler) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 }).handler(async function bufferedRoute(event) {
    const deferred: Promise<unknown>[] = [];
    const response = await runRoute(toGatewayRequest(event), route, (work) => deferred.push(work));
    await Promise.allSettled(deferred);
    if (typeof response.body === 'string') return { statusCode: response.status, headers: response.headers, body: response.body };
    const bytes = Buffer.isBuffer(response.body) ? response.body : await readAll(response.body);
    return { statusCode: response.status, headers: response.headers, body: bytes.toString('base64'), isBase64Encoded: true };
  });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
