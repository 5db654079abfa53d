import type { APIGatewayProxyEvent } from 'aws-lambda';
import { nameMap } from '../../core/name-map';
import type { GatewayRequest } from '../types';

const emptyBody = Buffer.alloc(0);

/**
 * Builds a GatewayRequest from a REST API (payload v1) proxy event. Its headers and query are
 * records without a prototype: the names are the client's, and may be `constructor` or `__proto__`.
 */
export function toGatewayRequest(event: APIGatewayProxyEvent): GatewayRequest {
  const headers = nameMap<string>();
  if (event.headers) {
    for (const name in event.headers) {
      const value = event.headers[name];
      if (value !== undefined) headers[name.toLowerCase()] = value;
    }
  }
  // binaryMediaTypes is */*, so API Gateway base64-encodes every body.
  let body = emptyBody;
  if (event.body) body = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  const query = nameMap<string>();
  if (event.queryStringParameters) {
    for (const name in event.queryStringParameters) {
      const value = event.queryStringParameters[name];
      if (value !== undefined) query[name] = value;
    }
  }
  return {
    method: event.httpMethod,
    path: event.path,
    rawQuery: encodeQuery(event.multiValueQueryStringParameters),
    query,
    headers,
    resource: event.resource,
    pathParameters: (event.pathParameters as Record<string, string> | null) ?? {},
    body,
    requestId: event.requestContext?.requestId ?? '',
    receivedAt: event.requestContext?.requestTimeEpoch ?? Date.now(),
  };
}

function encodeQuery(params: APIGatewayProxyEvent['multiValueQueryStringParameters']): string {
  if (!params) return '';
  const parts: string[] = [];
  for (const name in params) {
    for (const value of params[name] ?? []) parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  }
  return parts.join('&');
}
