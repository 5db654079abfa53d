/**
 * The events a function's handler is called with, shaped as Lambda delivers them: a REST API
 * (payload v1) proxy event for routes, an SQS event of one message for queue workers, a CloudWatch
 * Logs subscription event for log ingestion. Each call gets fresh ids, as each invocation would.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/** A route request: what the client sends, and the route it matches. */
export interface HttpRequestSpec {
  kind: 'http';
  method: string;
  path: string;
  /** The route as declared (`/v1/prompts/{promptId}/completions`). */
  resource: string;
  pathParameters?: Record<string, string>;
  headers: Record<string, string>;
  body?: string;
}

export interface SqsRequestSpec {
  kind: 'sqs';
  body: string;
  queueArn: string;
}

export interface LogsRequestSpec {
  kind: 'logs';
  /** A request-log line as a handler writes it; each copy gets a fresh `id`. */
  line: string;
  logGroup: string;
  /** Log events per subscription event (CloudWatch Logs delivers them in batches). */
  records: number;
}

export type RequestSpec = HttpRequestSpec | SqsRequestSpec | LogsRequestSpec;

export function apiGatewayEvent(spec: HttpRequestSpec, stage = 'size') {
  const requestId = randomUUID();
  const now = Date.now();
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(spec.headers)) multiValueHeaders[name] = [value];
  const body = spec.body === undefined ? null : Buffer.from(spec.body).toString('base64');
  return {
    resource: spec.resource,
    path: spec.path,
    httpMethod: spec.method,
    headers: { ...spec.headers },
    multiValueHeaders,
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: spec.pathParameters ?? null,
    stageVariables: null,
    requestContext: {
      accountId: '000000000000',
      apiId: 'size',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      extendedRequestId: requestId,
      httpMethod: spec.method,
      identity: { sourceIp: '127.0.0.1', userAgent: 'size', accessKey: null, accountId: null, caller: null, user: null, userArn: null },
      path: `/${stage}${spec.path}`,
      protocol: 'HTTP/1.1',
      requestId,
      requestTime: new Date(now).toUTCString(),
      requestTimeEpoch: now,
      resourceId: 'size',
      resourcePath: spec.resource,
      stage,
    },
    body,
    isBase64Encoded: body !== null,
  };
}

export function sqsEvent(spec: SqsRequestSpec, region = 'us-east-1') {
  const now = String(Date.now());
  return {
    Records: [
      {
        messageId: randomUUID(),
        receiptHandle: randomUUID(),
        body: spec.body,
        attributes: { ApproximateReceiveCount: '1', SentTimestamp: now, SenderId: '000000000000', ApproximateFirstReceiveTimestamp: now },
        messageAttributes: {},
        md5OfBody: '',
        eventSource: 'aws:sqs',
        eventSourceARN: spec.queueArn,
        awsRegion: region,
      },
    ],
  };
}

/** `records` log events per invocation, each record with a fresh id (records are stored once per id). */
export function logsEvent(spec: LogsRequestSpec, sequence: number) {
  const record = JSON.parse(spec.line) as Record<string, unknown>;
  const now = Date.now();
  const logEvents = Array.from({ length: spec.records }, (_, index) => ({
    id: `${sequence}-${index}`,
    timestamp: now,
    message: JSON.stringify({ ...record, id: randomUUID() }),
  }));
  const payload = {
    messageType: 'DATA_MESSAGE',
    owner: '000000000000',
    logGroup: spec.logGroup,
    logStream: 'size',
    subscriptionFilters: ['request-logs'],
    logEvents,
  };
  return { awslogs: { data: gzipSync(JSON.stringify(payload)).toString('base64') } };
}

export function eventFor(spec: RequestSpec, sequence: number): unknown {
  if (spec.kind === 'http') return apiGatewayEvent(spec);
  if (spec.kind === 'sqs') return sqsEvent(spec);
  return logsEvent(spec, sequence);
}
