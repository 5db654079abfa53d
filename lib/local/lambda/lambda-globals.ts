import type { Writable } from 'node:stream';

/** The marker Lambda's Node.js runtime reads to call a handler with a response stream. */
export const streamingMarker = Symbol.for('aws.lambda.runtime.handler.streaming');

/** The bytes between the JSON status/headers prelude and the body of a streamed HTTP response. */
export const preludeDelimiter = Buffer.alloc(8);

interface ResponseStreamLike extends Writable {
  setContentType?(type: string): void;
}

/**
 * Installs the `awslambda` global that Lambda's Node.js runtime provides, with the same behaviour
 * and byte format, so the very bundles deployed to Lambda run unchanged in the local runtime.
 */
export function installLambdaGlobals(): void {
  // The AWS SDK may have created the object already (it keeps its invoke store there).
  const globals = globalThis as { awslambda?: Record<string, unknown> };
  const awslambda = (globals.awslambda ??= {});
  if (typeof awslambda.streamifyResponse === 'function') return;
  Object.assign(awslambda, {
    streamifyResponse<T extends (...args: never[]) => unknown>(handler: T): T {
      (handler as unknown as Record<symbol, string>)[streamingMarker] = 'response';
      return handler;
    },
    HttpResponseStream: {
      from(stream: ResponseStreamLike, prelude: Record<string, unknown>): ResponseStreamLike {
        stream.setContentType?.('application/vnd.awslambda.http-integration-response');
        // The same bytes the runtime sends (prelude, eight NULs), in one write.
        const json = JSON.stringify(prelude);
        const bytes = Buffer.allocUnsafe(Buffer.byteLength(json) + preludeDelimiter.length);
        const written = bytes.write(json);
        preludeDelimiter.copy(bytes, written);
        stream.write(bytes);
        return stream;
      },
    },
  });
}
