import type { Readable, Writable } from 'node:stream';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { drain, type DeferredWork } from '../../core/deferred-work';
import { runRoute, type RouteHandler } from '../pipeline';
import type { GatewayResponse } from '../types';
import { toGatewayRequest } from './event';
import { awslambda } from './runtime-globals';

/**
 * A Lambda handler for a route that streams its response (API Gateway response transfer mode
 * STREAM): the status and headers go out first, then the body as it is produced; deferred work
 * (state writes) finishes after the body, before the invocation ends. Written on the runtime's
 * `streamifyResponse` directly rather than through middy: middy's stream `pipeline` costs an
 * AbortController and a DOMException per request, a measurable share of the gateway's CPU.
 */
export function streamingHandler(route: RouteHandler) {
  return awslambda().streamifyResponse(async function streamRoute(event, responseStream) {
    const deferred: DeferredWork = [];
    const response = await runRoute(toGatewayRequest(event), route, (work) => deferred.push(work));
    const output = awslambda().HttpResponseStream.from(responseStream, { statusCode: response.status, headers: response.headers });
    await writeBody(response.body, output);
    await drain(deferred);
  });
}

/** Writes the body to the response stream; a client that goes away stops the body (and its provider call). */
function writeBody(body: GatewayResponse['body'], output: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      output.off('finish', done);
      output.off('close', done);
      // Closed before it finished: the client went away.
      if (!output.writableFinished && typeof body === 'object' && 'destroy' in body) body.destroy();
      resolve();
    };
    output.once('finish', done);
    output.once('close', done);
    // A client that goes away errors the response stream; that ends this invocation, not the process.
    output.on('error', done);
    if (typeof body === 'string' || Buffer.isBuffer(body)) output.end(body);
    else {
      body.once('error', () => output.end());
      body.pipe(output);
    }
  });
}

/** A Lambda handler for a buffered route (control routes: JSON in, JSON out, 29 s at most). */
export function bufferedHandler(route: RouteHandler) {
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 }).handler(async function bufferedRoute(event) {
    const deferred: DeferredWork = [];
    const response = await runRoute(toGatewayRequest(event), route, (work) => deferred.push(work));
    // A streamed body is read before the deferred work is awaited: some of it (the log record)
    // waits for the body to end.
    const body = typeof response.body === 'string' || Buffer.isBuffer(response.body) ? response.body : await readAll(response.body);
    await drain(deferred);
    if (typeof body === 'string') return { statusCode: response.status, headers: response.headers, body };
    return { statusCode: response.status, headers: response.headers, body: body.toString('base64'), isBase64Encoded: true };
  });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}
