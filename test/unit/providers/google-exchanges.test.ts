/**
 * The Gemini and Vertex AI mapping against whole exchanges written from Google's documented format
 * (test/fixtures/providers): each request is what the gateway must send for the equivalent OpenAI
 * request, and each response or stream must come back in OpenAI's format, field by field.
 */
import { describe, expect, it } from 'vitest';
import { googleProvider } from '../../../lib/providers/google';
import { thoughtSignatureOf } from '../../../lib/providers/google/tool-call-id';
import type { PreparedCall, ProviderCall, ResolvedTarget } from '../../../lib/providers/types';
import { vertexAiProvider } from '../../../lib/providers/vertex-ai';
import { chatCall, runTransform } from '../../support/fakes/google';
import { readFixture, readFixtureBytes, readFixtureJson } from '../../support/fixtures';

const target: ResolvedTarget = { provider: googleProvider, baseUrl: googleProvider.baseUrl, settings: { api_key: 'AIza-test' } };
const prepare = (body: Record<string, unknown>) => googleProvider.adapter.prepare(chatCall(body, target) as ProviderCall) as PreparedCall;
const sentBody = (body: Record<string, unknown>) => JSON.parse(String((prepare(body) as any).body));
const exchange = (name: string) => readFixtureJson<{ request: any; response: any }>(name);

async function streamThrough(body: Record<string, unknown>, pieces: Array<string | Buffer>) {
  const usages: any[] = [];
  const prepared: any = prepare({ stream: true, ...body });
  const events = await runTransform(
    prepared.streamTransform((usage: any) => usages.push(usage)),
    pieces,
  );
  return { events, usages, chunks: events.filter((event) => event !== '[DONE]') };
}

const textOf = (chunks: any[]) => chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('');
const splitEvery = (bytes: Buffer, size: number) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
/** The `data:` payloads of a Google stream fixture. */
const streamChunks = (name: string) =>
  readFixture(name)
    .split('\r\n\r\n')
    .filter(Boolean)
    .map((event) => JSON.parse(event.slice('data: '.length)));

describe('Gemini generateContent (whole exchanges)', () => {
  it('sends a system prompt, a multi-turn chat and sampling settings as documented, and reads the answer', () => {
    const { request, response } = exchange('gemini-generate-content-chat.json');
    const openAIRequest = {
      model: 'gemini-2.0-flash',
      messages: [
        { role: 'system', content: 'You answer questions about European capitals in one sentence.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello! Ask me about a capital.' },
        { role: 'user', content: 'What is the capital of Portugal?' },
      ],
      temperature: 0.7,
      top_k: 32,
      top_p: 0.9,
      max_tokens: 256,
    };
    expect(sentBody(openAIRequest)).toEqual(request);

    const { body, usage } = (prepare(openAIRequest) as any).readResponse(Buffer.from(JSON.stringify(response)));
    const completion = JSON.parse(body);
    expect(completion).toMatchObject({ id: 'chatcmpl-q3RkaM2xB5vWjMcP7sL0aQ', object: 'chat.completion', model: 'gemini-2.0-flash' });
    expect(completion.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: 'The capital of Portugal is Lisbon.\n' }, finish_reason: 'stop', logprobs: null },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 31, completion_tokens: 8, total_tokens: 39 });
    expect(usage).toEqual(completion.usage);
  });

  it('maps a tool and a named tool_choice to functionDeclarations and toolConfig, and the signed function call back', () => {
    const { request, response } = exchange('gemini-generate-content-tool-call.json');
    const declaration = request.tools[0].functionDeclarations[0];
    const openAIRequest = {
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Join "north" and "wind" with the tool.' }],
      tools: [{ type: 'function', function: { name: 'joinWords', description: 'Joins two words into one', parameters: declaration.parametersJsonSchema } }],
      tool_choice: { type: 'function', function: { name: 'joinWords' } },
    };
    expect(sentBody(openAIRequest)).toEqual(request);

    const { body, usage } = (prepare(openAIRequest) as any).readResponse(Buffer.from(JSON.stringify(response)));
    const completion = JSON.parse(body);
    expect(completion.id).toBe('chatcmpl-r8VkaOq1J4nXvdIP2kT9sA');
    expect(completion.model).toBe('gemini-2.5-flash');
    const [choice] = completion.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const [call] = choice.message.tool_calls;
    expect(call).toMatchObject({ type: 'function', function: { name: 'joinWords', arguments: '{"first":"north","second":"wind"}' } });
    expect(call.id).toMatch(/^call_[0-9a-f]{16}_ts_[A-Za-z0-9_-]+$/);
    // The signature survives the trip through the OpenAI id, byte for byte.
    const signature = 'c2lnbmF0dXJlIGJ5dGVzIHdyaXR0ZW4gZm9yIHRoZSBmaXh0dXJl';
    expect(response.candidates[0].content.parts[0].thoughtSignature).toBe(signature);
    expect(thoughtSignatureOf(call.id)).toBe(signature);
    expect(usage).toEqual({ prompt_tokens: 58, completion_tokens: 63, total_tokens: 121, completion_tokens_details: { reasoning_tokens: 44 } });

    // The next turn sends the call back with its signature, and the result as a functionResponse.
    const next = sentBody({
      ...openAIRequest,
      messages: [...openAIRequest.messages, choice.message, { role: 'tool', tool_call_id: call.id, content: 'northwind' }],
    });
    expect(next.contents.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'joinWords', args: { first: 'north', second: 'wind' } }, thoughtSignature: signature }] },
      { role: 'user', parts: [{ functionResponse: { name: 'joinWords', response: { output: 'northwind' } } }] },
    ]);
  });

  it('sends a json_schema response_format as responseJsonSchema and reads cached and thinking tokens', () => {
    const { request, response } = exchange('gemini-generate-content-json-schema.json');
    const openAIRequest = {
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Describe Lisbon as a city card.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'city_card', schema: request.generationConfig.responseJsonSchema } },
    };
    expect(sentBody(openAIRequest)).toEqual(request);
    const { body, usage } = (prepare(openAIRequest) as any).readResponse(Buffer.from(JSON.stringify(response)));
    const completion = JSON.parse(body);
    expect(JSON.parse(completion.choices[0].message.content)).toEqual({ city: 'Lisbon', population: 567131, river: 'Tagus' });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 58,
      total_tokens: 70,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens_details: { reasoning_tokens: 37 },
    });
  });

  it("reads a 404 as the provider error with Google's status as the code", () => {
    const prepared: any = prepare({ model: 'gemini-0.9-nonexistent', messages: [{ role: 'user', content: 'why is the sky blue?' }], stream: true });
    expect(prepared.url.pathname).toBe('/v1beta/models/gemini-0.9-nonexistent:streamGenerateContent');
    expect(prepared.url.search).toBe('?alt=sse');
    expect(JSON.parse(prepared.body)).toEqual({ contents: [{ role: 'user', parts: [{ text: 'why is the sky blue?' }] }] });
    const error = prepared.readError(404, readFixtureBytes('gemini-error-404.json'), {});
    expect(error.status).toBe(404);
    expect(error.toBody().error).toEqual({
      message:
        'models/gemini-0.9-nonexistent is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.',
      type: 'not_found_error',
      param: null,
      code: 'NOT_FOUND',
      provider: 'google',
    });
  });
});

describe('Gemini streamGenerateContent (whole streams)', () => {
  it('streams the text: role first, every piece in order, stop, and usage only when asked', async () => {
    const sent = readFixtureBytes('gemini-stream-text.sse');
    // Cut every 7 bytes, so events and CRLFs are split across reads.
    const { events, chunks, usages } = await streamThrough(
      { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'high' }], stream_options: { include_usage: true } },
      splitEvery(sent, 7),
    );
    expect(events.at(-1)).toBe('[DONE]');
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    for (const chunk of chunks)
      expect(chunk).toMatchObject({ id: 'chatcmpl-t6XkaNr4L2pZwdIP8mQ1uC', model: 'gemini-2.5-flash', object: 'chat.completion.chunk' });
    expect(textOf(chunks)).toBe('Low. The sky looks blue because air scatters short blue wavelengths of sunlight more than red ones.');
    const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish.map((chunk) => chunk.choices[0].finish_reason)).toEqual(['stop']);
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    // The usage is cumulative on every chunk: the last one counts.
    expect(last.usage).toEqual({ prompt_tokens: 16, completion_tokens: 131, total_tokens: 147, completion_tokens_details: { reasoning_tokens: 112 } });
    expect(usages).toEqual([last.usage]);

    const plain = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'high' }] }, [sent]);
    expect(textOf(plain.chunks)).toBe(textOf(chunks));
    expect(plain.chunks.some((chunk) => chunk.usage)).toBe(false);
    expect(plain.usages).toEqual([last.usage]);
  });

  it('turns an error chunk after the stream started into an error event and [DONE]', async () => {
    const [first] = streamChunks('gemini-stream-text.sse');
    const { events, chunks } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }, [
      `data: ${JSON.stringify(first)}\r\n\r\n`,
      `data: ${readFixture('gemini-error-404.json').replace(/\n\s*/g, '')}\r\n\r\n`,
    ]);
    expect(textOf(chunks)).toBe('Low.');
    expect(events.at(-2).error).toMatchObject({ code: 'NOT_FOUND', provider: 'google', message: expect.stringContaining('is not found') });
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('turns a stream that ends without a finish reason into an error event', async () => {
    const [first] = streamChunks('gemini-stream-text.sse');
    const { events } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }, [
      `data: ${JSON.stringify(first)}\r\n\r\n`,
    ]);
    expect(events.at(-2).error).toMatchObject({ code: 'provider_stream_error', provider: 'google' });
    expect(events.at(-1)).toBe('[DONE]');
  });
});

describe('Vertex AI streamGenerateContent (whole stream)', () => {
  it('reads a Vertex stream whose usage only arrives on the last chunk, and MAX_TOKENS as length', async () => {
    const vertexTarget: ResolvedTarget = {
      provider: vertexAiProvider,
      baseUrl: 'https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4',
      settings: { api_key: 'ya29.test' },
    };
    const request = {
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'I say high, you say low, then say why the sky is blue.' },
        { role: 'user', content: 'high' },
      ],
      max_tokens: 45,
      stream: true,
      stream_options: { include_usage: true },
    };
    const prepared: any = await vertexAiProvider.adapter.prepare(chatCall(request, vertexTarget) as ProviderCall);
    expect(prepared.url.href).toBe(
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(JSON.parse(prepared.body)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'high' }] }],
      systemInstruction: { parts: [{ text: 'I say high, you say low, then say why the sky is blue.' }] },
      generationConfig: { maxOutputTokens: 45 },
    });

    const sent = readFixtureBytes('vertex-gemini-stream.sse');
    expect(
      streamChunks('vertex-gemini-stream.sse')
        .slice(0, -1)
        .every((chunk) => Object.keys(chunk.usageMetadata).join() === 'trafficType'),
    ).toBe(true);
    const usages: any[] = [];
    const events = await runTransform(
      prepared.streamTransform((usage: any) => usages.push(usage)),
      splitEvery(sent, 11),
    );
    const chunks = events.filter((event) => event !== '[DONE]');
    expect(textOf(chunks)).toBe('Low. Sunlight reaches the air, and the air scatters blue light the most');
    expect(chunks.filter((chunk) => chunk.choices[0]?.finish_reason).map((chunk) => chunk.choices[0].finish_reason)).toEqual(['length']);
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 19, completion_tokens: 45, total_tokens: 64, completion_tokens_details: { reasoning_tokens: 31 } });
    expect(usages).toEqual([chunks.at(-1).usage]);
    expect(events.at(-1)).toBe('[DONE]');
  });
});
