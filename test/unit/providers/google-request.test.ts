import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../../lib/core/errors';
import { googleProvider } from '../../../lib/providers/google';
import { googleAdapter } from '../../../lib/providers/google/adapter';
import { toGenerateContentRequest } from '../../../lib/providers/google/request';
import { newToolCallId } from '../../../lib/providers/google/tool-call-id';
import type { ChatRequest } from '../../../lib/providers/openai-format/types';
import type { PreparedCall, ProviderCall, ResolvedTarget } from '../../../lib/providers/types';
import { chatCall } from '../../support/fakes/google';
import { thrownGatewayError } from '../../support/gateway-error';

const map = (request: Partial<ChatRequest>, stream = false, strictApiCompliance = true) =>
  toGenerateContentRequest({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], ...request } as ChatRequest, {
    stream,
    strictApiCompliance,
  });
const target: ResolvedTarget = { provider: googleProvider, baseUrl: 'https://generativelanguage.googleapis.com/v1beta', settings: { api_key: 'AIza-key' } };
const prepare = (body: Record<string, unknown>, operation: ProviderCall['operation'] = 'chat') =>
  googleAdapter.prepare({ ...chatCall(body, target), operation } as ProviderCall) as PreparedCall;

function badRequest(run: () => unknown): GatewayError {
  const error = thrownGatewayError(run);
  expect(error.status).toBe(400);
  return error;
}

const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { city: { type: 'string', format: 'city-name' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
} as const;
const time = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } } as const;

describe('OpenAI messages → Gemini contents', () => {
  it('puts system and developer messages in systemInstruction and alternates user and model turns', () => {
    const body = map({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Bonjour' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And ' },
            { type: 'text', text: 'goodbye?' },
          ],
        },
      ],
    });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }] });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hello' }] },
      { role: 'model', parts: [{ text: 'Bonjour' }] },
      { role: 'user', parts: [{ text: 'And ' }, { text: 'goodbye?' }] },
    ]);
  });

  it('round-trips a multi-turn tool conversation: parallel calls, results merged into one user turn, signatures back', () => {
    const signed = newToolCallId('c2lnbmF0dXJlLW9uZQ==');
    const unsigned = newToolCallId();
    const later = newToolCallId();
    const body = map({
      tools: [weather, time],
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: signed, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: unsigned, type: 'function', function: { name: 'get_time', arguments: '{"zone":"CET"}' } },
          ],
        },
        { role: 'tool', tool_call_id: signed, content: '{"temp_c":21}' },
        { role: 'tool', tool_call_id: unsigned, content: [{ type: 'text', text: '14:05' }] },
        { role: 'assistant', content: 'It is 21°C at 14:05.' },
        { role: 'user', content: 'And in Rome?' },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: later, type: 'function', function: { name: 'get_weather', arguments: '' } }] },
        { role: 'tool', tool_call_id: later, content: '[1,2]' },
      ],
    });
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnbmF0dXJlLW9uZQ==' },
          { functionCall: { name: 'get_time', args: { zone: 'CET' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { temp_c: 21 } } },
          { functionResponse: { name: 'get_time', response: { output: '14:05' } } },
        ],
      },
      { role: 'model', parts: [{ text: 'It is 21°C at 14:05.' }] },
      { role: 'user', parts: [{ text: 'And in Rome?' }] },
      // A call from elsewhere (no signature in its id) gets Google's documented skip value.
      {
        role: 'model',
        parts: [{ text: 'Checking.' }, { functionCall: { name: 'get_weather', args: {} }, thoughtSignature: 'skip_thought_signature_validator' }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: [1, 2] } } }] },
    ]);
  });

  it('sends images as inlineData (data URLs) or fileData with a type from the extension', () => {
    const body = map({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.JPG?size=large' } },
            { type: 'image_url', image_url: { url: 'gs://bucket/photo.webp' } },
            { type: 'image_url', image_url: { url: 'https://cdn.example.com/img/123', mime_type: 'image/gif' } as never },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
      ],
    });
    expect(body.contents[0].parts).toEqual([
      { text: 'Compare' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPG?size=large' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'gs://bucket/photo.webp' } },
      { fileData: { mimeType: 'image/gif', fileUri: 'https://cdn.example.com/img/123' } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
      { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
    ]);
  });

  it('refuses what Gemini cannot take with a 400 that says why', () => {
    expect(
      badRequest(() => map({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://cdn.example.com/img/123' } }] }] })).param,
    ).toBe('messages[0].content[0].image_url.url');
    expect(badRequest(() => map({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] })).message).toMatch(
      /http/,
    );
    expect(badRequest(() => map({ messages: [{ role: 'tool', tool_call_id: 'call_nowhere', content: 'x' }] })).code).toBe('unknown_tool_call_id');
    expect(
      badRequest(() => map({ messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: 'not json' } }] }] }))
        .code,
    ).toBe('invalid_tool_arguments');
    expect(badRequest(() => map({ messages: [{ role: 'system', content: 'only a system prompt' }] })).param).toBe('messages');
    expect(badRequest(() => map({ n: 2 }, true)).param).toBe('n');
    expect(badRequest(() => map({ tools: [{ type: 'custom' } as never] })).param).toBe('tools[0]');
    expect(badRequest(() => map({ tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } })).param).toBe('tool_choice');
    expect(badRequest(() => map({ reasoning_effort: 'extreme' })).param).toBe('reasoning_effort');
    expect(badRequest(() => map({ messages: [{ role: 'user', content: [{ type: 'video', video: {} } as never] }] })).param).toBe('messages[0].content[0].type');
  });
});

describe('OpenAI parameters → Gemini', () => {
  it('sends tool schemas unchanged as parametersJsonSchema, and maps each tool_choice', () => {
    const body = map({ tools: [weather, time] });
    expect(body.tools).toEqual([
      {
        functionDeclarations: [
          { name: 'get_weather', description: 'Weather for a city', parametersJsonSchema: weather.function.parameters },
          { name: 'get_time', parametersJsonSchema: time.function.parameters },
        ],
      },
    ]);
    expect(body.toolConfig).toBeUndefined();
    expect(map({ tools: [weather], tool_choice: 'auto' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(map({ tools: [weather], tool_choice: 'required' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(map({ tools: [weather], tool_choice: 'none' }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(map({ tools: [weather, time], tool_choice: { type: 'function', function: { name: 'get_time' } } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] },
    });
    expect(map({ tools: [] }).tools).toBeUndefined();
  });

  it('maps sampling, limits, stops, candidates, penalties, JSON mode and thinking into generationConfig', () => {
    const body = map({
      temperature: 0.2,
      top_p: 0.9,
      top_k: 5,
      max_completion_tokens: 300,
      max_tokens: 10,
      stop: 'END',
      n: 2,
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      response_format: { type: 'json_object' },
      reasoning_effort: 'low',
    });
    expect(body.generationConfig).toEqual({
      temperature: 0.2,
      topP: 0.9,
      topK: 5,
      maxOutputTokens: 300,
      stopSequences: ['END'],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
      responseMimeType: 'application/json',
      thinkingConfig: { thinkingBudget: 1024 },
    });
    expect(map({ thinking: { type: 'enabled', budget_tokens: 2048 } }, false, false).generationConfig).toEqual({
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
    });
    expect(map({ thinking: { type: 'disabled' } }, false, false).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(badRequest(() => map({ thinking: { type: 'enabled', budget_tokens: 2048 } })).code).toBe('strict_api_compliance');
    expect(
      map({ temperature: null, stop: null, n: 1, response_format: { type: 'text' }, user: 'u1', logprobs: false, logit_bias: {}, parallel_tool_calls: false })
        .generationConfig,
    ).toBeUndefined();
    expect(badRequest(() => map({ logprobs: true })).param).toBe('logprobs');
    expect(badRequest(() => map({ logit_bias: { '50256': -100 } })).param).toBe('logit_bias');
  });
});

describe('the google adapter', () => {
  it('posts to models/{model}:generateContent with the key in x-goog-api-key, and streams with alt=sse', () => {
    const plain = prepare({ model: 'models/gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    expect(plain.url.href).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    expect(plain.headers).toMatchObject({ 'x-goog-api-key': 'AIza-key', 'content-type': 'application/json' });
    expect(plain.headers.authorization).toBeUndefined();
    const streamed = prepare({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(streamed.url.href).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(googleAdapter.authenticate({ method: 'GET', url: new URL('https://x'), headers: {} }, target)).toEqual({ 'x-goog-api-key': 'AIza-key' });
  });

  it('refuses text completions with a 400', () => {
    expect(badRequest(() => prepare({ model: 'gemini-2.5-flash', prompt: 'x' }, 'completions')).code).toBe('unsupported_operation');
  });

  it('maps embeddings to batchEmbedContents and back, as floats or little-endian float32 base64', () => {
    const prepared = prepare({ model: 'gemini-embedding-001', input: ['one', 'two'], dimensions: 3, encoding_format: 'base64' }, 'embeddings');
    expect(prepared.url.href).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(JSON.parse(String(prepared.body))).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'one' }] }, outputDimensionality: 3 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'two' }] }, outputDimensionality: 3 },
      ],
    });
    const answer = Buffer.from(JSON.stringify({ embeddings: [{ values: [0.5, -1, 2] }, { values: [0, 0.25, 1] }] }));
    const list = JSON.parse(String(prepared.readResponse(answer).body));
    expect(list).toMatchObject({ object: 'list', model: 'gemini-embedding-001', usage: { prompt_tokens: 0, total_tokens: 0 } });
    const decoded = Buffer.from(list.data[0].embedding, 'base64');
    expect([0, 1, 2].map((i) => decoded.readFloatLE(i * 4))).toEqual([0.5, -1, 2]);
    const floats = prepare({ model: 'gemini-embedding-001', input: 'one' }, 'embeddings');
    expect(JSON.parse(String(floats.readResponse(answer).body)).data[1]).toEqual({ object: 'embedding', index: 1, embedding: [0, 0.25, 1] });
    expect(badRequest(() => prepare({ model: 'gemini-embedding-001', input: [[1, 2, 3]] }, 'embeddings')).param).toBe('input');
  });
});
