import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChunks } from '../support/chat-stream';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openaiClient, waitForLogs } from '../support/gateway-client';

describe('the official openai client through the gateway', () => {
  const client = openaiClient();

  it('gets a chat completion', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe('gpt-4o-mini');
    expect(data.choices[0].message.role).toBe('assistant');
    expect(data.choices[0].message.content).toContain('Hello there');
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-gateway-provider')).toBe('openai');
    expect(response.headers.get('x-gateway-trace-id')).toBeTruthy();
  });

  it('streams a chat completion with usage when stream_options.include_usage is set', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Stream this please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text, finishReasons, last } = await collectChunks(stream);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(text).toContain('Stream this please');
    expect(finishReasons).toContain('stop');
    expect(last!.choices).toEqual([]);
    expect(last!.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('streams without a usage chunk when the client did not ask for one, and still logs usage', async () => {
    const traceId = `trace-stream-${Date.now()}`;
    const stream = await client.chat.completions.create(
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'no usage please' }], stream: true },
      { headers: { 'x-gateway-trace-id': traceId } },
    );
    const { chunks } = await collectChunks(stream);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.every((chunk) => chunk.choices.length > 0 && !chunk.usage)).toBe(true);
    const [log] = await waitForLogs(traceId);
    expect(log.stream).toBe(true);
    expect(log.usage.total_tokens).toBeGreaterThan(0);
    expect(log.status).toBe(200);
  });

  it('gets text completions, streamed and not', async () => {
    const completion = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say this is a test' });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices[0].text.length).toBeGreaterThan(0);

    const stream = await client.completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'Say this is a test',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('text_completion');
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(completion.choices[0].text);
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it('gets embeddings as floats and as base64', async () => {
    const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['one', 'two'], encoding_format: 'float' });
    expect(floats.data).toHaveLength(2);
    expect(floats.data[0].embedding.length).toBeGreaterThan(10);
    // The client asks for base64 by default and decodes it.
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'one' });
    expect(decoded.data[0].embedding).toHaveLength(floats.data[0].embedding.length);
    expect(decoded.data[0].embedding[0]).toBeCloseTo(floats.data[0].embedding[0], 5);
  });

  it('surfaces the provider error status and message', async () => {
    const error = await client.chat.completions.create({ model: 'error-429', messages: [{ role: 'user', content: 'hi' }] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.status).toBe(429);
    expect(error.error.provider).toBe('openai');
    expect(error.message).toMatch(/rate limit/i);
  });

  it('reaches an OpenAI-compatible provider by name', async () => {
    const groq = openaiClient({ provider: 'groq' });
    const { data, response } = await groq.chat.completions.create({ model: 'llama-3.3-70b', messages: [{ role: 'user', content: 'hi groq' }] }).withResponse();
    expect(data.choices[0].message.content).toContain('hi groq');
    expect(response.headers.get('x-gateway-provider')).toBe('groq');
  });
});

describe('a custom host', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
  });
  afterAll(() => upstream.close());

  it('sends the request to the custom host with the provider key as a bearer token', async () => {
    const client = openaiClient({ headers: { 'x-gateway-custom-host': `${upstream.url}/private/v1` }, apiKey: 'sk-private' });
    const stream = await client.chat.completions.create({ model: 'local-model', messages: [{ role: 'user', content: 'to my server' }], stream: true });
    const { text } = await collectChunks(stream);
    expect(text).toContain('to my server');
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/private/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-private');
    expect(sent.headers['x-gateway-api-key']).toBeUndefined();
    // The gateway asked for usage on the client's behalf.
    expect((sent.json as any).stream_options).toEqual({ include_usage: true });
  });
});
