import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChunks, collectChunksUntilError, makeWeatherTool } from '../support/chat-stream';
import { fakeEmbedding } from '../support/fake-upstream';
import { startFakeGoogle, type FakeGoogle } from '../support/fakes/google';
import { openaiClient, waitForLogs } from '../support/gateway-client';
import { readRecording, readRecordingJson, recordingsPresent } from '../support/recordings';

const weatherTool = makeWeatherTool({ additionalProperties: false });

/** A stream request for a model Google does not know, Google's 404 for it and the path it was sent to. */
interface NotFound {
  model: string;
  question: string;
  body: unknown;
  path: string;
}

/** Google's bytes of a streamed answer, the request that gets them and the text they carry. */
interface Replay {
  sse: string;
  model: string;
  question: string;
  text: string;
}

/** Google's 404 for a model it does not know: a minimal envelope, for the error test below. */
const unknownModel: NotFound = {
  model: 'gemini-unknown',
  question: 'hi',
  body: {
    error: { code: 404, message: 'models/gemini-unknown is not found for API version v1beta, or is not supported for generateContent.', status: 'NOT_FOUND' },
  },
  path: '/v1beta/models/gemini-unknown:streamGenerateContent?alt=sse',
};

// A recording is read inside the test that uses it, so without the recordings nothing is read.
const recordings = {
  notFound: (): NotFound => {
    const [exchange] = readRecordingJson<any>('gemini_stream_error_404_recording.json').interactions;
    return { model: 'custom-gemini-2.0-flash', question: 'why is the sky blue?', body: exchange.response.bodySegments[0], path: exchange.request.url };
  },
  replay: (): Replay => {
    const segments = readRecordingJson<any>('gemini_stream_text_recording.json').interactions[0].response.bodySegments;
    return {
      sse: readRecording('gemini_stream_text.DERIVED.sse'),
      model: 'gemini-2.5-flash',
      question: 'high',
      text: segments.map((segment: any) => segment.candidates[0].content.parts[0].text).join(''),
    };
  },
};

describe('google (Gemini API) through the gateway with the official openai client', () => {
  let fake: FakeGoogle;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startFakeGoogle({ apiKey: 'AIza-e2e-key' });
    client = openaiClient({ provider: 'google', apiKey: 'AIza-e2e-key', headers: { 'x-gateway-custom-host': `${fake.url}/v1beta` } });
  });
  afterAll(() => fake.close());

  async function surfacesNotFound({ model, question, body, path }: NotFound) {
    fake.script({ status: 404, json: body });
    const missing = await client.chat.completions.create({ model, messages: [{ role: 'user', content: question }], stream: true }).catch((error) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.error).toMatchObject({
      code: 'NOT_FOUND',
      provider: 'google',
      message: expect.stringContaining(`models/${model} is not found`),
    });
    expect(fake.requests.at(-1)!.path).toBe(path);
  }

  it('gets a plain text completion, with the key in x-goog-api-key', async () => {
    const traceId = `google-text-${Date.now()}`;
    const { data, response } = await client.chat.completions
      .create(
        {
          model: 'gemini-2.5-flash',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Hello Gemini' },
          ],
          temperature: 0.3,
          max_tokens: 100,
        },
        { headers: { 'x-gateway-trace-id': traceId } },
      )
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.id).toMatch(/^chatcmpl-fake/);
    expect(data.model).toBe('gemini-2.5-flash');
    expect(data.choices).toEqual([{ index: 0, message: { role: 'assistant', content: 'echo: Hello Gemini' }, finish_reason: 'stop', logprobs: null }]);
    expect(data.usage).toMatchObject({ completion_tokens_details: { reasoning_tokens: 7 } });
    expect(data.usage!.total_tokens).toBe(data.usage!.prompt_tokens + data.usage!.completion_tokens);
    expect(response.headers.get('x-gateway-provider')).toBe('google');

    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe('AIza-e2e-key');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.json).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello Gemini' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { temperature: 0.3, maxOutputTokens: 100 },
    });
    const [log] = await waitForLogs(traceId);
    expect(log.usage.total_tokens).toBe(data.usage!.total_tokens);
  });

  it('streams a tool call with one stable id, its arguments, tool_calls and usage at the end', async () => {
    const stream = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: "What's the weather in Paris?" }],
      tools: [weatherTool],
      tool_choice: 'required',
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, toolCalls, toolArguments, finishReason, last } = await collectChunks(stream);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(toolCalls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(toolCalls[0].id).toMatch(/^call_[0-9a-f]{16}_ts_/);
    expect(toolCalls.every((call) => call.index === 0)).toBe(true);
    expect(JSON.parse(toolArguments())).toEqual({ location: 'example' });
    expect(finishReason).toBe('tool_calls');
    expect(last).toMatchObject({ choices: [], usage: { completion_tokens_details: { reasoning_tokens: 7 } } });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(sent.json.tools).toEqual([
      { functionDeclarations: [{ name: 'get_weather', description: 'Current weather', parametersJsonSchema: weatherTool.function.parameters }] },
    ]);
    expect(sent.json.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
  });

  it("carries a two-turn tool conversation, signature included, through Gemini's checks", async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Please call a tool for the weather in Paris' }];
    const first = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool] });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '{"temp_c":21,"sky":"clear"}' });

    const second = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool] });
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(second.choices[0].message.content).toBe('results: [{"name":"get_weather","response":{"temp_c":21,"sky":"clear"}}]');
    const sent = fake.requests.at(-1)!.json;
    expect(sent.contents[1]).toEqual({
      role: 'model',
      parts: [{ functionCall: { name: 'get_weather', args: { location: 'example' } }, thoughtSignature: expect.any(String) }],
    });
    expect(sent.contents[2]).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp_c: 21, sky: 'clear' } } }] });

    // A third turn keeps the whole history valid for Gemini.
    messages.push(second.choices[0].message, { role: 'user', content: 'Thanks!' });
    const third = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool] });
    expect(third.choices[0].message.content).toBe('echo: Thanks!');
  });

  it('surfaces Google error statuses and messages, before and after the stream starts', async () => {
    const limited = await client.chat.completions.create({ model: 'error-429', messages: [{ role: 'user', content: 'hi' }] }).catch((error) => error);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.error).toMatchObject({ provider: 'google', code: 'RESOURCE_EXHAUSTED', message: 'The fake was asked to fail with 429.' });

    const badKey = openaiClient({ provider: 'google', apiKey: 'AIza-wrong', headers: { 'x-gateway-custom-host': `${fake.url}/v1beta` } });
    const denied = await badKey.chat.completions
      .create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((error) => error);
    expect(denied).toBeInstanceOf(OpenAI.BadRequestError);
    expect(denied.error).toMatchObject({ provider: 'google', code: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' });

    await surfacesNotFound(unknownModel);

    const stream = await client.chat.completions.create({
      model: 'error-midstream',
      messages: [{ role: 'user', content: 'long answer please' }],
      stream: true,
    });
    const { text, error: broken } = await collectChunksUntilError(stream);
    expect(text).toBe('echo: lo');
    expect(broken).toBeInstanceOf(OpenAI.APIError);
    expect((broken as Error).message).toMatch(/overloaded/);
  });

  it.skipIf(!recordingsPresent)('surfaces the recorded 404 before the stream starts (recorded transcripts)', () => surfacesNotFound(recordings.notFound()));

  it.skipIf(!recordingsPresent)('replays a Gemini stream through the gateway byte for byte (recorded transcripts)', async () => {
    const { sse, model, question, text } = recordings.replay();
    fake.script({ status: 200, rawSse: sse });
    const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: question }], stream: true });
    const { text: streamed } = await collectChunks(stream);
    expect(streamed).toBe(text);
  });

  it('gets embeddings, as floats and as the base64 the client asks for by default', async () => {
    const floats = await client.embeddings.create({ model: 'gemini-embedding-001', input: ['one', 'two'], dimensions: 4, encoding_format: 'float' });
    expect(floats.data.map((item) => item.embedding)).toEqual([Array.from(fakeEmbedding('one', 4)), Array.from(fakeEmbedding('two', 4))]);
    const decoded = await client.embeddings.create({ model: 'gemini-embedding-001', input: 'one', dimensions: 4 });
    expect(decoded.data[0].embedding).toEqual(Array.from(fakeEmbedding('one', 4)));
    expect(fake.requests.at(-1)!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
  });

  it('answers text completions with a 400', async () => {
    const error = await client.completions.create({ model: 'gemini-2.5-flash', prompt: 'x' }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error.code).toBe('unsupported_operation');
  });
});
