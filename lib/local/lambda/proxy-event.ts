import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { nameMap } from '../../core/name-map';
import type { RouteMatch } from './route-table';

/**
 * Builds the REST API (payload v1) proxy event API Gateway would send for this request: header
 * casing kept plus `multiValueHeaders`, decoded query parameters, path parameters, a request
 * context with stage and request id, and the body base64-encoded (the API's binary media types are
 * `*\/*`). The maps keyed by the client's names have no prototype, so a header or parameter named
 * `constructor` or `__proto__` is an entry like any other.
 */
export function buildProxyEvent(request: IncomingMessage, url: URL, path: string, match: RouteMatch, body: Buffer, stage: string): APIGatewayProxyEvent {
  const headers = nameMap<string>();
  const multiValueHeaders = nameMap<string[]>();
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    const value = raw[i + 1];
    headers[name] = value;
    (multiValueHeaders[name] ??= []).push(value);
  }
  let queryStringParameters: Record<string, string> | null = null;
  let multiValueQueryStringParameters: Record<string, string[]> | null = null;
  for (const [name, value] of url.searchParams) {
    (queryStringParameters ??= nameMap())[name] = value;
    ((multiValueQueryStringParameters ??= nameMap())[name] ??= []).push(value);
  }
  const now = Date.now();
  const requestId = randomUUID();
  const sourceIp = request.socket.remoteAddress ?? '127.0.0.1';
  return {
    resource: match.resource,
    path,
    httpMethod: request.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters,
    multiValueQueryStringParameters,
    pathParameters: Object.keys(match.pathParameters).length > 0 ? match.pathParameters : null,
    stageVariables: null,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: undefined,
      domainName: request.headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      extendedRequestId: requestId,
      httpMethod: request.method ?? 'GET',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp,
        user: null,
        userAgent: request.headers['user-agent'] ?? null,
        userArn: null,
      },
      path: `/${stage}${path}`,
      protocol: `HTTP/${request.httpVersion}`,
      requestId,
      requestTime: new Date(now).toUTCString(),
      requestTimeEpoch: now,
      resourceId: 'local',
      resourcePath: match.resource,
      stage,
    },
    body: body.length > 0 ? body.toString('base64') : null,
    isBase64Encoded: body.length > 0,
  };
}
