import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUrls } from '../../../lib/guardrails/checks/network';
import { checkInput, run } from './check-input';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

/** A loopback server whose answers the tests set per path. */
async function startServer(handle: (request: Received, response: ServerResponse) => void): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const entry = { path: request.url ?? '/', headers: request.headers, body: text ? JSON.parse(text) : {} };
      received.push(entry);
      handle(entry, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
};

describe('network checks (loopback fakes)', () => {
  let fake: Awaited<ReturnType<typeof startServer>>;
  const mode = process.env.GATEWAY_MODE;

  beforeAll(async () => {
    // The outbound guard allows loopback only in local mode: the fakes live on 127.0.0.1.
    process.env.GATEWAY_MODE = 'local';
    fake = await startServer((request, response) => {
      if (request.path === '/pass') return json(response, 200, { verdict: true, data: { reviewed: true } });
      if (request.path === '/deny') return json(response, 200, { verdict: false });
      if (request.path === '/rewrite')
        return json(response, 200, {
          verdict: true,
          transformedData: { request: { json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'clean' }] }, text: 'clean' } },
        });
      if (request.path === '/slow') return setTimeout(() => json(response, 200, { verdict: true }), 1_000);
      if (request.path === '/broken') return json(response, 500, { error: 'no' });
      if (request.path === '/no-verdict') return json(response, 200, { ok: true });
      if (request.path === '/log') return json(response, 204, {});
      if (request.path === '/missing') return json(response, 404, {});
      response.writeHead(200);
      response.end();
    });
  });
  afterAll(async () => {
    process.env.GATEWAY_MODE = mode;
    await new Promise((resolve) => fake.server.close(resolve));
  });

  describe('default.webhook', () => {
    it('takes the verdict of the webhook, which gets the event but never the request headers', async () => {
      const input = checkInput('hello', { headers: { authorization: 'Bearer caller-secret' }, metadata: { user: 'u1' } });
      const result = await run('default.webhook', { webhookURL: `${fake.url}/pass`, headers: { 'x-hook-key': 'k' } }, input);
      expect(result).toMatchObject({ verdict: true, data: { responseData: { reviewed: true } } });
      const received = fake.received.at(-1)!;
      expect(received.headers['x-hook-key']).toBe('k');
      expect(received.body).toMatchObject({
        eventType: 'beforeRequestHook',
        requestType: 'chatComplete',
        request: { text: 'hello', json: { model: 'gpt-4o-mini' } },
        metadata: { user: 'u1' },
      });
      expect(JSON.stringify(received.body)).not.toContain('caller-secret');
      expect((await run('default.webhook', { webhookURL: `${fake.url}/deny` }, 'x')).verdict).toBe(false);
    });

    it('passes on a rewritten body and text', async () => {
      const result = await run('default.webhook', { webhookURL: `${fake.url}/rewrite` }, 'dirty');
      expect(result).toMatchObject({ verdict: true, transformed: true, transformedText: 'clean', transformedBody: { messages: [{ content: 'clean' }] } });
    });

    it('sends the answer on the response side', async () => {
      await run(
        'default.webhook',
        { webhookURL: `${fake.url}/pass` },
        checkInput('answer', { side: 'response', response: { choices: [{ message: { content: 'answer' } }] } }),
      );
      expect(fake.received.at(-1)!.body).toMatchObject({
        eventType: 'afterRequestHook',
        response: { text: 'answer', json: { choices: [{ message: { content: 'answer' } }] } },
      });
    });

    it.each([
      ['a timeout', { webhookURL: `/slow`, timeout: 100 }, /did not answer within 100 ms/],
      ['an error status', { webhookURL: `/broken` }, /answered with status 500/],
      ['an answer without a verdict', { webhookURL: `/no-verdict` }, /without a boolean `verdict`/],
    ])('fails on %s only with failOnError', async (_name, parameters, message) => {
      const params = { ...parameters, webhookURL: `${fake.url}${parameters.webhookURL}` };
      expect(await run('default.webhook', params, 'x')).toMatchObject({ verdict: true, error: expect.stringMatching(message) });
      expect(await run('default.webhook', { ...params, failOnError: true }, 'x')).toMatchObject({ verdict: false, error: expect.stringMatching(message) });
    });

    it('is refused a loopback address outside local mode, with a clear error and no request sent', async () => {
      const before = fake.received.length;
      process.env.GATEWAY_MODE = 'aws';
      try {
        const result = await run('default.webhook', { webhookURL: `${fake.url}/pass`, failOnError: true }, 'x');
        expect(result.verdict).toBe(false);
        expect(result.error).toMatch(/could not be called: Outbound connections to 127\.0\.0\.1 \(127\.0\.0\.1\) are not allowed/);
      } finally {
        process.env.GATEWAY_MODE = 'local';
      }
      expect(fake.received.length).toBe(before);
    });

    it('stops when the request is abandoned', async () => {
      const controller = new AbortController();
      const pending = run('default.webhook', { webhookURL: `${fake.url}/slow`, failOnError: true }, checkInput('x', { signal: controller.signal }));
      setTimeout(() => controller.abort(), 50);
      expect(await pending).toMatchObject({ verdict: false, error: expect.stringMatching(/abandoned/) });
    });

    it.each([
      [{}, /`webhookURL` is required/],
      [{ webhookURL: 'ftp://example.com' }, /http:\/\/ or https:\/\//],
      [{ webhookURL: 'http://user:pw@example.com' }, /credentials/],
      [{ webhookURL: 'http://example.com', headers: '{bad' }, /not JSON/],
      [{ webhookURL: 'http://example.com', headers: { host: 'x' } }, /may not set `host`/],
      [{ webhookURL: 'http://example.com', timeout: 0 }, /from 1 to 60000/],
    ])('refuses %j', async (parameters, message) => {
      expect((await run('default.webhook', { ...parameters, failOnError: true }, 'x')).error).toMatch(message);
    });
  });

  describe('default.log', () => {
    it('posts the event and always passes', async () => {
      const result = await run(
        'default.log',
        { logURL: `${fake.url}/log`, headers: JSON.stringify({ 'x-log': '1' }) },
        checkInput('a', { side: 'response', response: { id: 'r1' } }),
      );
      expect(result).toMatchObject({ verdict: true });
      expect(fake.received.at(-1)).toMatchObject({
        path: '/log',
        headers: { 'x-log': '1' },
        body: { eventType: 'afterRequestHook', response: { json: { id: 'r1' } } },
      });
    });

    it('reports an endpoint that fails, and fails the check only with failOnError', async () => {
      expect(await run('default.log', { logURL: `${fake.url}/broken` }, 'a')).toMatchObject({ verdict: true, error: expect.stringMatching(/status 500/) });
      expect(await run('default.log', { logURL: `${fake.url}/broken`, failOnError: true }, 'a')).toMatchObject({ verdict: false });
    });
  });

  describe('default.validUrls', () => {
    it('passes URLs that answer and fails those that do not', async () => {
      expect((await run('default.validUrls', {}, `See ${fake.url}/ok and ${fake.url}/log.`)).verdict).toBe(true);
      const result = await run('default.validUrls', {}, `See ${fake.url}/ok and ${fake.url}/missing`);
      expect(result).toMatchObject({ verdict: false, data: { invalidUrls: [{ url: `${fake.url}/missing`, reason: 'status 404' }] } });
      expect((await run('default.validUrls', { not: true }, `${fake.url}/missing`)).verdict).toBe(true);
    });

    it('checks only that host names resolve with onlyDNS', async () => {
      const port = new URL(fake.url).port;
      expect((await run('default.validUrls', { onlyDNS: true }, `http://localhost:${port}/missing`)).verdict).toBe(true);
      expect((await run('default.validUrls', { onlyDNS: true, timeout: 500 }, 'http://no-such-host.invalid/x')).verdict).toBe(false);
    });

    it('counts a refused address as invalid', async () => {
      process.env.GATEWAY_MODE = 'aws';
      try {
        const result = await run('default.validUrls', {}, `${fake.url}/ok`);
        expect(result.verdict).toBe(false);
        expect(JSON.stringify(result.data)).toMatch(/not allowed/);
      } finally {
        process.env.GATEWAY_MODE = 'local';
      }
    });

    it('passes a text without URLs, and finds URLs without trailing punctuation', async () => {
      expect(await run('default.validUrls', {}, 'no links here')).toMatchObject({ verdict: true });
      expect(findUrls('Go to https://example.com/a?b=1. Or (http://x.org/y)!')).toEqual(['https://example.com/a?b=1', 'http://x.org/y']);
    });
  });
});
