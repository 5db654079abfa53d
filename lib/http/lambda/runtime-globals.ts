import type { Writable } from 'node:stream';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';

/** What Lambda's Node.js runtime provides as the `awslambda` global for response streaming. */
interface AwsLambdaGlobal {
  streamifyResponse(handler: (event: APIGatewayProxyEvent, responseStream: Writable, context: Context) => Promise<void>): unknown;
  HttpResponseStream: {
    from(responseStream: Writable, prelude: { statusCode: number; headers?: Record<string, string>; cookies?: string[] }): Writable;
  };
}

/** The runtime's `awslambda` global (the local runtime installs the same one). */
export function awslambda(): AwsLambdaGlobal {
  const runtime = (globalThis as { awslambda?: AwsLambdaGlobal }).awslambda;
  if (!runtime?.streamifyResponse) throw new Error('Response streaming needs the awslambda global of the Lambda Node.js runtime (or the local runtime).');
  return runtime;
}
