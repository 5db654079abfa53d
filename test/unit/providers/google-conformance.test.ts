/**
 * The Gemini mapping against Google's wire format: the request the gateway sends for an OpenAI request
 * must be the one Google's format calls for, and Google's answers and streams must come back as
 * OpenAI's format, field by field. The whole exchanges are the recorded Google transcripts beside the
 * repository (read inside each test, skipped without them); the inline tests at the end build only the
 * chunk they need.
 */
import { describe, expect, it } from 'vitest';
import { googleProvider } from '../../../lib/providers/google';
import { googleAdapter } from '../../../lib/providers/google/adapter';
import { thoughtSignatureOf } from '../../../lib/providers/google/tool-call-id';
import type { PreparedCall, ProviderCall, ResolvedTarget } from '../../../lib/providers/types';
import { vertexAiProvider } from '../../../lib/providers/vertex-ai';
import { chatCall, runTransform } from '../../support/fakes/google';
import { readRecording, readRecordingBytes, readRecordingJson, recordingsPresent } from '../../support/recordings';

const target: ResolvedTarget = { provider: googleProvider, baseUrl: googleProvider.baseUrl, settings: { api_key: 'AIza-test' } };
const vertexTarget: ResolvedTarget = {
  provider: vertexAiProvider,
  baseUrl: 'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1',
  settings: { api_key: 'ya29.test' },
};
const prepare = (body: Record<string, unknown>) => googleAdapter.prepare(chatCall(body, target) as ProviderCall) as PreparedCall;
const sentBody = (body: Record<string, unknown>) => JSON.parse(String((prepare(body) as any).body));
const recording = (name: string) => readRecordingJson<any>(name);
/** The text of a stream's events, joined, as a recording holds them. */
const segmentsText = (segments: any[]) => segments.map((segment) => segment.candidates[0].content.parts[0].text).join('');
/** A recorded interaction's response events as the SSE bytes of `streamGenerateContent?alt=sse`. */
const exchangeSse = (exchange: any, index = 0, lineEnd = '\r\n') =>
  exchange.interactions[index].response.bodySegments.map((segment: unknown) => `data: ${JSON.stringify(segment)}${lineEnd}${lineEnd}`).join('');
const functionDeclaration = (tool: { name: string; description: string; parameters: Json }): Json => ({
  name: tool.name,
  description: tool.description,
  parametersJsonSchema: tool.parameters,
});

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
const toolCallsOf = (chunks: any[]) => chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
const asFunctionTool = (tool: { name: string; description: string; parameters: Record<string, unknown> }) => ({
  type: 'function',
  function: { name: tool.name, description: tool.description, parameters: tool.parameters },
});

type Json = Record<string, any>;
type Usage = Record<string, unknown>;

/**
 * One source of Google exchanges and what the gateway must make of them: the OpenAI request, the body
 * it must send (a recording made by another client is compared without that client's own defaults),
 * Google's answer and what it must become. Each is produced by a function, so a recording is read only
 * when its test runs, never while the tests are collected.
 */
interface GoogleSource {
  chat: () => { request: Json; sent: Json; response: string; answer: unknown; usage: Usage };
  toolChoice: () => { request: Json; sent: Json; response: Json; id: string; name: string; args: Json; signature: string; result: string; usage: Usage };
  jsonSchema: () => { request: Json; sent: Json; response: Json; value: unknown; usage: Usage };
  notFound: () => { request: Json; url: string; sent: Json; response: Json; message: unknown };
  /** `sse` is Google's bytes; `lfSse` the same events framed with LF alone. */
  text: () => { request: Json; sent: Json; sse: Buffer; multiByteCut: boolean; lfSse: string; id: string; text: string; usage: Usage };
  maxTokens: () => { request: Json; sse: string; text: string; usage: Usage };
  /** Two turns: what each sends and streams back; `nextArguments` is the second call's arguments as streamed. */
  functionCall: () => { first: Json; question: string; sent: [Json, Json]; sse: [string, string]; name: string; args: Json; nextArguments: string };
  /** A first text event and an error event to follow it. */
  midStream: () => { model: string; textEvent: Json; errorEvent: Json; text: string };
  vertex: () => { request: Json; path: string; sent: Json; sse: string; text: string; usage: Usage };
}

const recordings: GoogleSource = {
  chat: () => {
    const capture = readRecording('gemini_generatecontent_nonstream_capture.txt');
    const recorded = JSON.parse(capture.slice(capture.indexOf("echo '") + 6, capture.indexOf("}')") + 1));
    const { responseMimeType: _textPlain, ...generationConfig } = recorded.generationConfig;
    return {
      request: {
        model: 'gemini-1.5-flash',
        messages: [
          { role: 'system', content: 'You are an assistant for the company Coca Cola ' },
          { role: 'user', content: 'allo' },
          { role: 'assistant', content: 'hello how can I help you ' },
          { role: 'user', content: 'what is Coca Cola' },
        ],
        temperature: 1,
        top_k: 40,
        top_p: 0.95,
        max_tokens: 8192,
      },
      sent: { contents: recorded.contents, systemInstruction: { parts: recorded.systemInstruction.parts }, generationConfig },
      response: capture.slice(capture.indexOf('\n{\n  "candidates"')),
      answer: expect.stringMatching(/^Coca-Cola is a carbonated soft drink/),
      usage: { prompt_tokens: 26, completion_tokens: 68, total_tokens: 94 },
    };
  },
  toolChoice: () => {
    const exchange = recording('gemini_generatecontent_function_call_toolconfig_recording.json').interactions[0];
    const recorded = exchange.request.bodySegments[0];
    const declaration = recorded.tools[0].functionDeclarations[0];
    const response = exchange.response.bodySegments[0];
    return {
      request: {
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: recorded.contents[0].parts[0].text }],
        tools: [asFunctionTool({ ...declaration, parameters: declaration.parametersJsonSchema })],
        tool_choice: { type: 'function', function: { name: 'concatStringFunction' } },
      },
      sent: { contents: recorded.contents, tools: recorded.tools, toolConfig: recorded.toolConfig },
      response,
      id: 'chatcmpl-eC77aJKnKYam1e8PyLWRiQw',
      name: 'concatStringFunction',
      args: { firstString: 'hello', secondString: 'world' },
      signature: response.candidates[0].content.parts[0].thoughtSignature,
      result: 'hello world',
      usage: { prompt_tokens: 65, completion_tokens: 91, total_tokens: 156, completion_tokens_details: { reasoning_tokens: 69 } },
    };
  },
  jsonSchema: () => {
    const exchange = recording('gemini_generatecontent_responseJsonSchema_recording.json').interactions[0];
    const recorded = exchange.request.bodySegments[0];
    return {
      request: {
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'populate the following object' }],
        response_format: { type: 'json_schema', json_schema: { name: 'object', schema: recorded.generationConfig.responseJsonSchema } },
      },
      sent: recorded,
      response: exchange.response.bodySegments[0],
      value: expect.objectContaining({ simpleString: 'example', inner: expect.objectContaining({ innerNumber: 100 }) }),
      usage: {
        prompt_tokens: 5,
        completion_tokens: 279,
        total_tokens: 284,
        prompt_tokens_details: { cached_tokens: 3 },
        completion_tokens_details: { reasoning_tokens: 41 },
      },
    };
  },
  notFound: () => {
    const exchange = recording('gemini_stream_error_404_recording.json').interactions[0];
    return {
      request: { model: 'custom-gemini-2.0-flash', messages: [{ role: 'user', content: 'why is the sky blue?' }], stream: true },
      url: exchange.request.url,
      sent: { contents: exchange.request.bodySegments[0].contents },
      response: exchange.response.bodySegments[0],
      message: expect.stringMatching(/^models\/custom-gemini-2.0-flash is not found for API version v1beta/),
    };
  },
  text: () => {
    const exchange = recording('gemini_stream_text_recording.json');
    const recorded = exchange.interactions[0].request.bodySegments[0];
    return {
      request: {
        model: 'gemini-2.5-flash',
        messages: [
          { role: 'system', content: recorded.systemInstruction.parts[0].text },
          { role: 'user', content: 'high' },
        ],
      },
      sent: { contents: recorded.contents, systemInstruction: { parts: recorded.systemInstruction.parts } },
      sse: readRecordingBytes('gemini_stream_text.DERIVED.sse'),
      multiByteCut: false,
      lfSse: exchangeSse(exchange, 0, '\n'),
      id: 'chatcmpl-tS77aIl-4ZvV7w_A9rTBBg',
      text: segmentsText(exchange.interactions[0].response.bodySegments),
      usage: { prompt_tokens: 20, completion_tokens: 513, total_tokens: 533, completion_tokens_details: { reasoning_tokens: 260 } },
    };
  },
  maxTokens: () => ({
    request: { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'why is the sky blue?' }] },
    sse: readRecording('gemini_stream_max_tokens.DERIVED.sse'),
    text: segmentsText(recording('gemini_stream_max_tokens_recording.json').interactions[0].response.bodySegments),
    usage: { prompt_tokens: 7, completion_tokens: 198, total_tokens: 205, completion_tokens_details: { reasoning_tokens: 45 } },
  }),
  functionCall: () => {
    const exchange = recording('gemini_stream_function_call_recording.json');
    const [firstTurn, secondTurn] = exchange.interactions;
    const divide = {
      name: 'customDivide',
      description: 'Custom divide function',
      parameters: { type: 'object', properties: { numerator: { type: 'number' }, denominator: { type: 'number' } } },
    };
    // The recording's client declared the tool in Gemini's older Schema; the gateway sends the JSON Schema it was given.
    const tools = [{ functionDeclarations: [functionDeclaration(divide)] }];
    return {
      first: { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'what is the result of 100/2' }], tools: [asFunctionTool(divide)] },
      question: 'what is the result of 50/2?',
      sent: [
        { contents: firstTurn.request.bodySegments[0].contents, tools },
        { contents: secondTurn.request.bodySegments[0].contents, tools },
      ],
      sse: [exchangeSse(exchange, 0), exchangeSse(exchange, 1)],
      name: divide.name,
      args: { denominator: 2, numerator: 100 },
      nextArguments: '{"denominator":2,"numerator":50}',
    };
  },
  midStream: () => {
    const textEvent = recording('gemini_stream_text_recording.json').interactions[0].response.bodySegments[0];
    return {
      model: 'gemini-2.5-flash',
      textEvent,
      errorEvent: recording('gemini_stream_error_404_recording.json').interactions[0].response.bodySegments[0],
      text: textEvent.candidates[0].content.parts[0].text,
    };
  },
  vertex: () => {
    const exchange = recording('vertex_gemini_stream_text_recording.json');
    const [{ request, response }] = exchange.interactions;
    const recorded = request.bodySegments[0];
    return {
      request: {
        model: 'gemini-2.5-flash',
        messages: [
          { role: 'system', content: 'I say high you say low, then tell me why is the sky blue.' },
          { role: 'user', content: 'high' },
        ],
        max_tokens: 200,
      },
      // The recorded path, on the API version and project of this test's target.
      path: request.url.replace('/v1beta1/projects/REDACTED/locations/REDACTED/', '/v1/projects/p/locations/us-central1/'),
      sent: {
        contents: recorded.contents,
        systemInstruction: { parts: recorded.systemInstruction.parts },
        generationConfig: { maxOutputTokens: recorded.generationConfig.maxOutputTokens },
      },
      sse: exchangeSse(exchange),
      text: segmentsText(response.bodySegments),
      usage: { prompt_tokens: 17, completion_tokens: 197, total_tokens: 214, completion_tokens_details: { reasoning_tokens: 65 } },
    };
  },
};

describe.skipIf(!recordingsPresent)('Gemini and Vertex AI: recorded transcripts', () => {
  const source = recordings;
  const run = it;

  describe('Gemini generateContent (non-streamed)', () => {
    run('sends the expected request for a system prompt and a multi-turn chat, and reads the answer', () => {
      const { request, sent, response, answer, usage: expectedUsage } = source.chat();
      expect(sentBody(request)).toEqual(sent);

      const { body, usage } = (prepare({ model: request.model, messages: [{ role: 'user', content: 'x' }] }) as any).readResponse(Buffer.from(response));
      const completion = JSON.parse(body);
      expect(completion).toMatchObject({ object: 'chat.completion', model: request.model });
      expect(completion.id).toMatch(/^chatcmpl-/);
      expect(completion.choices).toEqual([
        {
          index: 0,
          message: { role: 'assistant', content: answer },
          finish_reason: 'stop',
          logprobs: null,
        },
      ]);
      expect(completion.usage).toEqual(expectedUsage);
      expect(usage).toEqual(completion.usage);
    });

    run('maps tools and a named tool_choice to functionDeclarations and toolConfig, and the signed function call back', () => {
      const { request, sent, response, id, name, args, signature, result, usage: expectedUsage } = source.toolChoice();
      expect(sentBody(request)).toEqual(sent);

      const { body, usage } = (prepare(request) as any).readResponse(Buffer.from(JSON.stringify(response)));
      const completion = JSON.parse(body);
      expect(completion.id).toBe(id);
      expect(completion.model).toBe(request.model);
      const [choice] = completion.choices;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls).toHaveLength(1);
      const [call] = choice.message.tool_calls;
      expect(call).toMatchObject({ type: 'function', function: { name } });
      expect(JSON.parse(call.function.arguments)).toEqual(args);
      expect(call.id).toMatch(/^call_[0-9a-f]{16}_ts_[A-Za-z0-9_-]+$/);
      // The signature survives the trip through the OpenAI id byte for byte, its '+' and '/' included.
      expect(signature).toMatch(/[+]/);
      expect(signature).toMatch(/[/]/);
      expect(thoughtSignatureOf(call.id)).toBe(signature);
      expect(usage).toEqual(expectedUsage);

      // The next turn sends the call back with its signature, and the result as a functionResponse.
      const next = sentBody({
        ...request,
        messages: [...request.messages, choice.message, { role: 'tool', tool_call_id: call.id, content: result }],
      });
      expect(next.contents.slice(1)).toEqual([
        { role: 'model', parts: [{ functionCall: { name, args }, thoughtSignature: signature }] },
        { role: 'user', parts: [{ functionResponse: { name, response: { output: result } } }] },
      ]);
    });

    run('sends a json_schema response_format as responseJsonSchema and reads cached and thinking tokens', () => {
      const { request, sent, response, value, usage: expectedUsage } = source.jsonSchema();
      expect(sentBody(request)).toEqual(sent);
      const { body, usage } = (prepare(request) as any).readResponse(Buffer.from(JSON.stringify(response)));
      const completion = JSON.parse(body);
      expect(JSON.parse(completion.choices[0].message.content)).toEqual(value);
      expect(completion.choices[0].finish_reason).toBe('stop');
      expect(usage).toEqual(expectedUsage);
    });

    run("reads a 404 as the provider error with Google's status as the code", () => {
      const { request, url, sent, response, message } = source.notFound();
      const prepared: any = prepare(request);
      expect(prepared.url.pathname).toBe(url.split('?')[0]);
      expect(prepared.url.search).toBe('?alt=sse');
      expect(JSON.parse(prepared.body)).toEqual(sent);
      const error = prepared.readError(404, Buffer.from(JSON.stringify(response)), {});
      expect(error.status).toBe(404);
      expect(error.toBody().error).toMatchObject({ message, type: 'not_found_error', code: 'NOT_FOUND', provider: 'google' });
    });
  });

  describe('Gemini streamGenerateContent', () => {
    run('streams text: role first, every piece in order, stop, and usage only when asked', async () => {
      const { request, sent, sse, multiByteCut, lfSse, id, text, usage } = source.text();
      expect(sentBody(request)).toEqual(sent);
      // Cut every 7 bytes, so events, CRLFs and (where the text has them) multi-byte characters are split across reads.
      const pieces = splitEvery(sse, 7);
      expect(pieces.some((piece) => (piece[0] & 0xc0) === 0x80)).toBe(multiByteCut);
      const { events, chunks, usages } = await streamThrough({ ...request, stream_options: { include_usage: true } }, pieces);
      expect(events.at(-1)).toBe('[DONE]');
      expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.every((chunk) => chunk.id === id && chunk.model === request.model && chunk.object === 'chat.completion.chunk')).toBe(true);
      expect(textOf(chunks)).toBe(text);
      const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
      expect(finish.map((chunk) => chunk.choices[0].finish_reason)).toEqual(['stop']);
      const last = chunks.at(-1);
      expect(last.choices).toEqual([]);
      expect(last.usage).toEqual(usage);
      expect(usages).toEqual([last.usage]);

      // The same events framed with LF alone, which Google's clients accept too, and without
      // include_usage: no usage chunk, usage still reported.
      const plain = await streamThrough(request, [lfSse]);
      expect(textOf(plain.chunks)).toBe(text);
      expect(plain.chunks.some((chunk) => chunk.usage)).toBe(false);
      expect(plain.usages).toHaveLength(1);
    });

    run('ends a MAX_TOKENS stream with finish_reason length', async () => {
      const { request, sse, text, usage } = source.maxTokens();
      const { chunks, usages } = await streamThrough(request, [sse]);
      expect(textOf(chunks)).toBe(text);
      expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
      expect(usages).toEqual([usage]);
    });

    run('streams a function call as one tool call with an id, its whole arguments, and tool_calls', async () => {
      const { first, question, sent, sse, name, args, nextArguments } = source.functionCall();
      expect(sentBody(first)).toEqual(sent[0]);
      const { chunks } = await streamThrough(first, [sse[0]]);
      const calls = toolCallsOf(chunks);
      expect(calls[0]).toEqual({
        index: 0,
        id: expect.stringMatching(/^call_[0-9a-f]{16}$/),
        type: 'function',
        function: { name, arguments: '' },
      });
      expect(
        JSON.parse(
          calls
            .slice(1)
            .map((call: any) => call.function.arguments)
            .join(''),
        ),
      ).toEqual(args);
      expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');

      // The second turn: the unsigned call (gemini-2.0 signs nothing) is sent back with Google's skip value.
      const second = sentBody({
        ...first,
        messages: [
          ...first.messages,
          { role: 'assistant', content: null, tool_calls: [{ id: calls[0].id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] },
          { role: 'user', content: question },
        ],
      });
      expect(second.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
      delete second.contents[1].parts[0].thoughtSignature;
      expect(second).toEqual(sent[1]);
      const next = await streamThrough(first, [sse[1]]);
      expect(toolCallsOf(next.chunks).at(-1).function.arguments).toBe(nextArguments);
    });

    run('turns an error chunk after the stream started into an error event and [DONE]', async () => {
      const { model, textEvent, errorEvent, text } = source.midStream();
      const { events, chunks } = await streamThrough({ model, messages: [{ role: 'user', content: 'x' }] }, [
        `data: ${JSON.stringify(textEvent)}\r\n\r\n`,
        `data: ${JSON.stringify(errorEvent)}\r\n\r\n`,
      ]);
      expect(textOf(chunks)).toBe(text);
      expect(events.at(-2).error).toMatchObject({ code: 'NOT_FOUND', provider: 'google', message: expect.stringContaining('is not found') });
      expect(events.at(-1)).toBe('[DONE]');
    });

    run('turns a stream that ends without a finish reason into an error event', async () => {
      const { model, textEvent } = source.midStream();
      const { events } = await streamThrough({ model, messages: [{ role: 'user', content: 'x' }] }, [`data: ${JSON.stringify(textEvent)}\r\n\r\n`]);
      expect(events.at(-2).error).toMatchObject({ code: 'provider_stream_error', provider: 'google' });
      expect(events.at(-1)).toBe('[DONE]');
    });
  });

  describe('Vertex AI streamGenerateContent', () => {
    run('reads a Vertex stream, whose usage only arrives on the last chunk', async () => {
      const { request, path, sent, sse, text, usage } = source.vertex();
      const prepared: any = await vertexAiProvider.adapter.prepare(
        chatCall({ ...request, stream: true, stream_options: { include_usage: true } }, vertexTarget) as ProviderCall,
      );
      expect(prepared.url.href).toBe(
        'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      );
      expect(prepared.url.pathname + prepared.url.search).toBe(path);
      expect(JSON.parse(prepared.body)).toEqual(sent);

      const usages: any[] = [];
      const events = await runTransform(
        prepared.streamTransform((usage: any) => usages.push(usage)),
        [sse],
      );
      const chunks = events.filter((event) => event !== '[DONE]');
      expect(textOf(chunks)).toBe(text);
      expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason).choices[0].finish_reason).toBe('length');
      expect(chunks.at(-1).usage).toEqual(usage);
      expect(usages).toHaveLength(1);
    });
  });
});

// One behaviour the recordings cannot show (their text is ASCII): characters of two and three UTF-8
// bytes cut apart by the reads come out whole. One inline chunk is enough.
describe('Gemini streamGenerateContent: inline', () => {
  it('joins multi-byte characters split across reads', async () => {
    const text = 'Free over €50 (about £43).';
    const chunk = {
      candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 8, totalTokenCount: 11 },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'inline01',
    };
    const pieces = splitEvery(Buffer.from(`data: ${JSON.stringify(chunk)}\r\n\r\n`), 1);
    expect(pieces.some((piece) => (piece[0] & 0xc0) === 0x80)).toBe(true);
    const { chunks } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }, pieces);
    expect(textOf(chunks)).toBe(text);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });
});
