import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { preludeDelimiter, streamingMarker } from '../../lib/local/lambda/lambda-globals';
import type { ServerlessFunction, ServerlessRoute } from '../../lib/local/template/serverless-config';
import { startLocalServer, type LambdaHandler, type LocalServer } from '../../lib/local/lambda/server';
import { rawExchange } from '../support/raw-http';

// The local API Gateway with stand-in functions, for what the real routes never produce: a function
// answer the server cannot write as HTTP.

const badValue = 'a\u0000b';

/** A streaming function that sends `headers` in its prelude, then a body. */
function streaming(headers: Record<string, string>, body = 'streamed body'): LambdaHandler {
  const handler = async (_event: unknown, stream: unknown) => {
    const output = stream as Writable;
    output.write(Buffer.concat([Buffer.from(JSON.stringify({ statusCode: 200, headers })), preludeDelimiter]));
    output.end(body);
    await finished(output).catch(() => undefined);
  };
  return Object.assign(handler, { [streamingMarker]: 'response' });
}

/** A buffered function that answers with `headers`. */
function buffered(headers: Record<string, string>): LambdaHandler {
  return async () => ({ statusCode: 200, headers, body: 'buffered body' });
}

const handlers: Record<string, LambdaHandler> = {
  streamBadValue: streaming({ 'content-type': 'text/plain', 'x-bad': badValue }),
  streamBadName: streaming({ 'content-type': 'text/plain', 'bad name': 'x' }),
  streamFine: streaming({ 'content-type': 'text/plain', 'x-fine': 'yes' }),
  bufferedBadValue: buffered({ 'content-type': 'text/plain', 'x-bad': badValue }),
  bufferedBadName: buffered({ 'content-type': 'text/plain', 'bad name': 'x' }),
  bufferedFine: buffered({ 'content-type': 'text/plain', 'x-fine': 'yes' }),
};

const routes: ServerlessRoute[] = Object.keys(handlers).map((name) => ({
  method: 'GET',
  path: `/v1/${name}`,
  functionName: name,
  streaming: name.startsWith('stream'),
  integrationTimeoutMs: 29_000,
}));
const functions: ServerlessFunction[] = routes.map((route) => ({
  name: route.functionName,
  artifact: '',
  timeoutSeconds: 30,
  memorySize: 128,
  streaming: route.streaming,
  routes: [route],
  queues: [],
}));

let server: LocalServer;
beforeAll(async () => {
  server = await startLocalServer({ host: '127.0.0.1', port: 0, stage: 'test', service: 'gateway', routes, functions, handlerFor: (name) => handlers[name] });
});
afterAll(() => server.close());

describe('the local server writing a function answer', () => {
  for (const name of ['streamBadValue', 'streamBadName', 'bufferedBadValue', 'bufferedBadName']) {
    it(`answers a JSON 502 when the function's headers cannot be written (${name})`, async () => {
      const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        const response = await fetch(`${server.url}/v1/${name}`);
        expect(response.status).toBe(502);
        expect(response.headers.get('content-type')).toBe('application/json');
        expect(await response.json()).toEqual({ message: 'Internal server error' });
        expect(logged.mock.calls.flat().join(' ')).toMatch(new RegExp(`${name}.*header`, 's'));
      } finally {
        logged.mockRestore();
      }
    });
  }

  it('answers on the same connection afterwards', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const answer = await rawExchange(
        server.url,
        'GET /v1/streamBadValue HTTP/1.1\r\nHost: localhost\r\n\r\nGET /v1/bufferedFine HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
      );
      const text = answer.raw.toString('latin1');
      expect(text).toMatch(/^HTTP\/1\.1 502 Bad Gateway\r\n/);
      expect(text).toMatch(/\r\n\r\n\{"message":"Internal server error"\}HTTP\/1\.1 200 OK\r\n[\s\S]*x-fine: yes[\s\S]*buffered body$/);
    } finally {
      logged.mockRestore();
    }
  });

  it('writes well-formed answers as before', async () => {
    for (const name of ['streamFine', 'bufferedFine']) {
      const response = await fetch(`${server.url}/v1/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.headers.get('x-fine'), name).toBe('yes');
      expect(await response.text(), name).toBe(name === 'streamFine' ? 'streamed body' : 'buffered body');
    }
  });
});
