/**
 * The Gemini mapping against Google's wire format: the request the gateway sends for an OpenAI request
 * must be the one Google's format calls for, and Google's answers and streams must come back as
 * OpenAI's format, field by field. The samples are the repository's own (`test/fixtures/providers/
 * gemini.ts`); recorded Google exchanges, when they are beside the repository, get the same checks.
 */
import { describe, expect, it } from 'vitest';
import { googleProvider } from '../../../lib/providers/google';
import { thoughtSignatureOf } from '../../../lib/providers/google/tool-call-id';
import type { PreparedCall, ProviderCall, ResolvedTarget } from '../../../lib/providers/types';
import { vertexAiProvider } from '../../../lib/providers/vertex-ai';
import {
  exchangeSse,
  lookupOrder,
  missingModel,
  missingModelStream,
  orderDesk,
  orderDeskChat,
  orderLookup,
  orderLookupCall,
  orderLookupStream,
  orderLookupStreamCalls,
  orderSummary,
  orderSummaryJson,
  returnsStream,
  returnsStreamMaxTokens,
  shippingStream,
  shippingStreamText,
  vertexStream,
  vertexStreamText,
} from '../../fixtures/providers/gemini';
import { chatCall, recordingSse, runTransform } from '../../support/fakes/google';
import { readRecording, readRecordingBytes, readRecordingJson, recordingsPresent } from '../../support/recordings';

const target: ResolvedTarget = { provider: googleProvider, baseUrl: googleProvider.baseUrl, settings: { api_key: 'AIza-test' } };
const vertexTarget: ResolvedTarget = {
  provider: vertexAiProvider,
  baseUrl: 'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1',
  settings: { api_key: 'ya29.test' },
};
const prepare = (body: Record<string, unknown>) => googleProvider.adapter.prepare(chatCall(body, target) as ProviderCall) as PreparedCall;
const sentBody = (body: Record<string, unknown>) => JSON.parse(String((prepare(body) as any).body));
const recording = (name: string) => readRecordingJson<any>(name);

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

describe('Gemini generateContent (non-streamed)', () => {
  it('sends the expected request for a system prompt and a multi-turn chat, and reads the answer', () => {
    const [call] = orderDeskChat.interactions;
    const [greeting, reply, question] = orderDesk.turns;
    const sent = sentBody({
      model: orderDesk.model,
      messages: [
        { role: 'system', content: orderDesk.system },
        { role: 'user', content: greeting },
        { role: 'assistant', content: reply },
        { role: 'user', content: question },
      ],
      temperature: 0.4,
      top_k: 32,
      top_p: 0.9,
      max_tokens: 1024,
    });
    expect(sent).toEqual(call.request.bodySegments[0]);

    // Pretty-printed, as Google sends a non-streamed answer.
    const response = JSON.stringify(call.response.bodySegments[0], null, 2);
    const { body, usage } = (prepare({ model: orderDesk.model, messages: [{ role: 'user', content: 'x' }] }) as any).readResponse(Buffer.from(response));
    const completion = JSON.parse(body);
    expect(completion).toMatchObject({ object: 'chat.completion', model: orderDesk.model });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: orderDesk.answer },
        finish_reason: 'stop',
        logprobs: null,
      },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 37, completion_tokens: 29, total_tokens: 66 });
    expect(usage).toEqual(completion.usage);
  });

  it('maps tools and a named tool_choice to functionDeclarations and toolConfig, and the signed function call back', () => {
    const [exchange] = orderLookupCall.interactions;
    const request = {
      model: orderLookup.model,
      messages: [{ role: 'user', content: orderLookup.question }],
      tools: [asFunctionTool(lookupOrder)],
      tool_choice: { type: 'function', function: { name: lookupOrder.name } },
    };
    expect(sentBody(request)).toEqual(exchange.request.bodySegments[0]);

    const { body, usage } = (prepare(request) as any).readResponse(Buffer.from(JSON.stringify(exchange.response.bodySegments[0])));
    const completion = JSON.parse(body);
    expect(completion.id).toBe('chatcmpl-gwSampleLookup01');
    expect(completion.model).toBe(orderLookup.model);
    const [choice] = completion.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const [call] = choice.message.tool_calls;
    expect(call).toMatchObject({ type: 'function', function: { name: lookupOrder.name } });
    expect(JSON.parse(call.function.arguments)).toEqual(orderLookup.args);
    expect(call.id).toMatch(/^call_[0-9a-f]{16}_ts_[A-Za-z0-9_-]+$/);
    // The signature survives the trip through the OpenAI id byte for byte, its '+' and '/' included.
    expect(orderLookup.signature).toMatch(/[+]/);
    expect(orderLookup.signature).toMatch(/[/]/);
    expect(thoughtSignatureOf(call.id)).toBe(orderLookup.signature);
    expect(usage).toEqual({ prompt_tokens: 48, completion_tokens: 72, total_tokens: 120, completion_tokens_details: { reasoning_tokens: 57 } });

    // The next turn sends the call back with its signature, and the result as a functionResponse.
    const next = sentBody({
      ...request,
      messages: [...request.messages, choice.message, { role: 'tool', tool_call_id: call.id, content: orderLookup.result }],
    });
    expect(next.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [{ functionCall: { name: lookupOrder.name, args: orderLookup.args }, thoughtSignature: orderLookup.signature }],
      },
      { role: 'user', parts: [{ functionResponse: { name: lookupOrder.name, response: { output: orderLookup.result } } }] },
    ]);
  });

  it('sends a json_schema response_format as responseJsonSchema and reads cached and thinking tokens', () => {
    const [exchange] = orderSummaryJson.interactions;
    const request = {
      model: orderSummary.model,
      messages: [{ role: 'user', content: orderSummary.prompt }],
      response_format: { type: 'json_schema', json_schema: { name: 'order_summary', schema: orderSummary.schema } },
    };
    expect(sentBody(request)).toEqual(exchange.request.bodySegments[0]);
    const { body, usage } = (prepare(request) as any).readResponse(Buffer.from(JSON.stringify(exchange.response.bodySegments[0])));
    const completion = JSON.parse(body);
    expect(JSON.parse(completion.choices[0].message.content)).toEqual(orderSummary.value);
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(usage).toEqual({
      prompt_tokens: 31,
      completion_tokens: 123,
      total_tokens: 154,
      prompt_tokens_details: { cached_tokens: 12 },
      completion_tokens_details: { reasoning_tokens: 27 },
    });
  });

  it("reads a 404 as the provider error with Google's status as the code", () => {
    const [exchange] = missingModelStream.interactions;
    const prepared: any = prepare({ model: missingModel.model, messages: [{ role: 'user', content: missingModel.question }], stream: true });
    expect(prepared.url.pathname).toBe(exchange.request.url.split('?')[0]);
    expect(prepared.url.search).toBe('?alt=sse');
    expect(JSON.parse(prepared.body)).toEqual(exchange.request.bodySegments[0]);
    const error = prepared.readError(404, Buffer.from(JSON.stringify(exchange.response.bodySegments[0])), {});
    expect(error.status).toBe(404);
    expect(error.toBody().error).toMatchObject({
      message: `models/${missingModel.model} is not found for API version v1beta, or is not supported for generateContent.`,
      type: 'not_found_error',
      code: 'NOT_FOUND',
      provider: 'google',
    });
  });
});

describe('Gemini streamGenerateContent', () => {
  it('streams text: role first, every piece in order, stop, and usage only when asked', async () => {
    const expected = shippingStream.pieces.join('');
    const request = {
      model: shippingStream.model,
      messages: [
        { role: 'system', content: shippingStream.system },
        { role: 'user', content: shippingStream.question },
      ],
    };
    expect(sentBody(request)).toEqual(shippingStreamText.interactions[0].request.bodySegments[0]);
    // Cut every 7 bytes, so events, CRLFs and multi-byte characters are split across reads.
    const pieces = splitEvery(Buffer.from(exchangeSse(shippingStreamText)), 7);
    expect(pieces.some((piece) => (piece[0] & 0xc0) === 0x80)).toBe(true);
    const { events, chunks, usages } = await streamThrough({ ...request, stream_options: { include_usage: true } }, pieces);
    expect(events.at(-1)).toBe('[DONE]');
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(
      chunks.every((chunk) => chunk.id === 'chatcmpl-gwSampleStream01' && chunk.model === shippingStream.model && chunk.object === 'chat.completion.chunk'),
    ).toBe(true);
    expect(textOf(chunks)).toBe(expected);
    const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish.map((chunk) => chunk.choices[0].finish_reason)).toEqual(['stop']);
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 23, completion_tokens: 169, total_tokens: 192, completion_tokens_details: { reasoning_tokens: 112 } });
    expect(usages).toEqual([last.usage]);

    // The same stream framed with LF alone, which Google's clients accept too, and without
    // include_usage: no usage chunk, usage still reported.
    const plain = await streamThrough(request, [exchangeSse(shippingStreamText, 0, '\n')]);
    expect(textOf(plain.chunks)).toBe(expected);
    expect(plain.chunks.some((chunk) => chunk.usage)).toBe(false);
    expect(plain.usages).toHaveLength(1);
  });

  it('ends a MAX_TOKENS stream with finish_reason length', async () => {
    const { chunks, usages } = await streamThrough({ model: returnsStream.model, messages: [{ role: 'user', content: returnsStream.question }] }, [
      exchangeSse(returnsStreamMaxTokens),
    ]);
    expect(textOf(chunks)).toBe(returnsStream.pieces.join(''));
    expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
    expect(usages).toEqual([{ prompt_tokens: 11, completion_tokens: 125, total_tokens: 136, completion_tokens_details: { reasoning_tokens: 64 } }]);
  });

  it('streams a function call as one tool call with an id, its whole arguments, and tool_calls', async () => {
    const [firstTurn, secondTurn] = orderLookupStreamCalls.interactions;
    const first = {
      model: orderLookupStream.model,
      messages: [{ role: 'user', content: orderLookupStream.questions[0] }],
      tools: [asFunctionTool(lookupOrder)],
    };
    expect(sentBody(first)).toEqual(firstTurn.request.bodySegments[0]);
    const { chunks } = await streamThrough(first, [exchangeSse(orderLookupStreamCalls, 0)]);
    const calls = toolCallsOf(chunks);
    expect(calls[0]).toEqual({
      index: 0,
      id: expect.stringMatching(/^call_[0-9a-f]{16}$/),
      type: 'function',
      function: { name: lookupOrder.name, arguments: '' },
    });
    expect(
      JSON.parse(
        calls
          .slice(1)
          .map((call: any) => call.function.arguments)
          .join(''),
      ),
    ).toEqual(orderLookupStream.args[0]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');

    // The second turn: the unsigned call (gemini-2.0 signs nothing) is sent back with Google's skip value.
    const second = sentBody({
      ...first,
      messages: [
        ...first.messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: calls[0].id, type: 'function', function: { name: lookupOrder.name, arguments: JSON.stringify(orderLookupStream.args[0]) } }],
        },
        { role: 'user', content: orderLookupStream.questions[1] },
      ],
    });
    expect(second.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
    delete second.contents[1].parts[0].thoughtSignature;
    expect(second).toEqual(secondTurn.request.bodySegments[0]);
    const next = await streamThrough(first, [exchangeSse(orderLookupStreamCalls, 1)]);
    expect(toolCallsOf(next.chunks).at(-1).function.arguments).toBe('{"order_id":"A-1077","include_items":true}');
  });

  it('turns an error chunk after the stream started into an error event and [DONE]', async () => {
    const error = missingModelStream.interactions[0].response.bodySegments[0];
    const text = shippingStreamText.interactions[0].response.bodySegments[0];
    const { events, chunks } = await streamThrough({ model: shippingStream.model, messages: [{ role: 'user', content: 'x' }] }, [
      `data: ${JSON.stringify(text)}\r\n\r\n`,
      `data: ${JSON.stringify(error)}\r\n\r\n`,
    ]);
    expect(textOf(chunks)).toBe(shippingStream.pieces[0]);
    expect(events.at(-2).error).toMatchObject({ code: 'NOT_FOUND', provider: 'google', message: expect.stringContaining('is not found') });
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('turns a stream that ends without a finish reason into an error event', async () => {
    const text = shippingStreamText.interactions[0].response.bodySegments[0];
    const { events } = await streamThrough({ model: shippingStream.model, messages: [{ role: 'user', content: 'x' }] }, [
      `data: ${JSON.stringify(text)}\r\n\r\n`,
    ]);
    expect(events.at(-2).error).toMatchObject({ code: 'provider_stream_error', provider: 'google' });
    expect(events.at(-1)).toBe('[DONE]');
  });
});

describe('Vertex AI streamGenerateContent', () => {
  it('reads a Vertex stream, whose usage only arrives on the last chunk', async () => {
    const [exchange] = vertexStreamText.interactions;
    const request = {
      model: vertexStream.model,
      messages: [
        { role: 'system', content: vertexStream.system },
        { role: 'user', content: vertexStream.question },
      ],
      max_tokens: vertexStream.maxOutputTokens,
      stream: true,
      stream_options: { include_usage: true },
    };
    const prepared: any = await vertexAiProvider.adapter.prepare(chatCall(request, vertexTarget) as ProviderCall);
    expect(prepared.url.href).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(prepared.url.pathname + prepared.url.search).toBe(exchange.request.url);
    expect(JSON.parse(prepared.body)).toEqual(exchange.request.bodySegments[0]);

    const usages: any[] = [];
    const events = await runTransform(
      prepared.streamTransform((usage: any) => usages.push(usage)),
      [exchangeSse(vertexStreamText)],
    );
    const chunks = events.filter((event) => event !== '[DONE]');
    expect(textOf(chunks)).toBe(vertexStream.pieces.join(''));
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason).choices[0].finish_reason).toBe('length');
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 25, completion_tokens: 77, total_tokens: 102, completion_tokens_details: { reasoning_tokens: 38 } });
    expect(usages).toHaveLength(1);
  });
});

// The same checks over recorded Google exchanges, with the values they recorded. Every file is read
// inside a test, so without the recordings the suite is skipped and nothing is read.
describe.skipIf(!recordingsPresent)('Gemini and Vertex AI: recorded transcripts', () => {
  describe('generateContent, non-streamed', () => {
    it('sends the recorded request for a system prompt and a multi-turn chat, and reads the recorded answer', () => {
      const capture = readRecording('gemini_generatecontent_nonstream_capture.txt');
      const recorded = JSON.parse(capture.slice(capture.indexOf("echo '") + 6, capture.indexOf("}')") + 1));
      const sent = sentBody({
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
      });
      expect(sent.contents).toEqual(recorded.contents);
      expect(sent.systemInstruction.parts).toEqual(recorded.systemInstruction.parts);
      const { responseMimeType: _textPlain, ...generationConfig } = recorded.generationConfig;
      expect(sent.generationConfig).toEqual(generationConfig);

      const response = capture.slice(capture.indexOf('\n{\n  "candidates"'));
      const { body, usage } = (prepare({ model: 'gemini-1.5-flash', messages: [{ role: 'user', content: 'x' }] }) as any).readResponse(Buffer.from(response));
      const completion = JSON.parse(body);
      expect(completion).toMatchObject({ object: 'chat.completion', model: 'gemini-1.5-flash' });
      expect(completion.id).toMatch(/^chatcmpl-/);
      expect(completion.choices).toEqual([
        {
          index: 0,
          message: { role: 'assistant', content: expect.stringMatching(/^Coca-Cola is a carbonated soft drink/) },
          finish_reason: 'stop',
          logprobs: null,
        },
      ]);
      expect(completion.usage).toEqual({ prompt_tokens: 26, completion_tokens: 68, total_tokens: 94 });
      expect(usage).toEqual(completion.usage);
    });

    it('maps tools and a named tool_choice to the recorded functionDeclarations and toolConfig, and the signed function call back', () => {
      const exchange = recording('gemini_generatecontent_function_call_toolconfig_recording.json').interactions[0];
      const recorded = exchange.request.bodySegments[0];
      const declaration = recorded.tools[0].functionDeclarations[0];
      const request = {
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: recorded.contents[0].parts[0].text }],
        tools: [{ type: 'function', function: { name: declaration.name, description: declaration.description, parameters: declaration.parametersJsonSchema } }],
        tool_choice: { type: 'function', function: { name: 'concatStringFunction' } },
      };
      const sent = sentBody(request);
      expect(sent.contents).toEqual(recorded.contents);
      expect(sent.tools).toEqual(recorded.tools);
      expect(sent.toolConfig).toEqual(recorded.toolConfig);

      const { body, usage } = (prepare(request) as any).readResponse(Buffer.from(JSON.stringify(exchange.response.bodySegments[0])));
      const completion = JSON.parse(body);
      expect(completion.id).toBe('chatcmpl-eC77aJKnKYam1e8PyLWRiQw');
      expect(completion.model).toBe('gemini-2.5-flash');
      const [choice] = completion.choices;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls).toHaveLength(1);
      const [call] = choice.message.tool_calls;
      expect(call).toMatchObject({ type: 'function', function: { name: 'concatStringFunction' } });
      expect(JSON.parse(call.function.arguments)).toEqual({ firstString: 'hello', secondString: 'world' });
      expect(call.id).toMatch(/^call_[0-9a-f]{16}_ts_[A-Za-z0-9_-]+$/);
      // The signature survives the trip through the OpenAI id, byte for byte.
      const signature = exchange.response.bodySegments[0].candidates[0].content.parts[0].thoughtSignature;
      expect(thoughtSignatureOf(call.id)).toBe(signature);
      expect(usage).toEqual({ prompt_tokens: 65, completion_tokens: 91, total_tokens: 156, completion_tokens_details: { reasoning_tokens: 69 } });

      // The next turn sends the call back with its signature, and the result as a functionResponse.
      const next = sentBody({ ...request, messages: [...request.messages, choice.message, { role: 'tool', tool_call_id: call.id, content: 'hello world' }] });
      expect(next.contents.slice(1)).toEqual([
        {
          role: 'model',
          parts: [{ functionCall: { name: 'concatStringFunction', args: { firstString: 'hello', secondString: 'world' } }, thoughtSignature: signature }],
        },
        { role: 'user', parts: [{ functionResponse: { name: 'concatStringFunction', response: { output: 'hello world' } } }] },
      ]);
    });

    it('sends a json_schema response_format as the recorded responseJsonSchema and reads cached and thinking tokens', () => {
      const exchange = recording('gemini_generatecontent_responseJsonSchema_recording.json').interactions[0];
      const recorded = exchange.request.bodySegments[0];
      const request = {
        model: 'gemini-2.5-flash',
        messages: [{ role: 'user', content: 'populate the following object' }],
        response_format: { type: 'json_schema', json_schema: { name: 'object', schema: recorded.generationConfig.responseJsonSchema } },
      };
      expect(sentBody(request)).toEqual(recorded);
      const { body, usage } = (prepare(request) as any).readResponse(Buffer.from(JSON.stringify(exchange.response.bodySegments[0])));
      const completion = JSON.parse(body);
      expect(JSON.parse(completion.choices[0].message.content)).toMatchObject({ simpleString: 'example', inner: { innerNumber: 100 } });
      expect(completion.choices[0].finish_reason).toBe('stop');
      expect(usage).toEqual({
        prompt_tokens: 5,
        completion_tokens: 279,
        total_tokens: 284,
        prompt_tokens_details: { cached_tokens: 3 },
        completion_tokens_details: { reasoning_tokens: 41 },
      });
    });

    it("reads the recorded 404 as the provider error with Google's status as the code", () => {
      const exchange = recording('gemini_stream_error_404_recording.json').interactions[0];
      const prepared: any = prepare({ model: 'custom-gemini-2.0-flash', messages: [{ role: 'user', content: 'why is the sky blue?' }], stream: true });
      expect(prepared.url.pathname).toBe(exchange.request.url.split('?')[0]);
      expect(prepared.url.search).toBe('?alt=sse');
      expect(JSON.parse(prepared.body)).toEqual({ contents: exchange.request.bodySegments[0].contents });
      const error = prepared.readError(404, Buffer.from(JSON.stringify(exchange.response.bodySegments[0])), {});
      expect(error.status).toBe(404);
      expect(error.toBody().error).toMatchObject({
        message: expect.stringMatching(/^models\/custom-gemini-2.0-flash is not found for API version v1beta/),
        type: 'not_found_error',
        code: 'NOT_FOUND',
        provider: 'google',
      });
    });
  });

  describe('streamGenerateContent', () => {
    it('streams the recorded text: role first, every piece in order, stop, and usage only when asked', async () => {
      const exchange = recording('gemini_stream_text_recording.json').interactions[0];
      const segments = exchange.response.bodySegments;
      const expected = segments.map((segment: any) => segment.candidates[0].content.parts[0].text).join('');
      const derived = readRecordingBytes('gemini_stream_text.DERIVED.sse');
      // Cut every 7 bytes, so events and CRLFs are split across reads.
      const { events, chunks, usages } = await streamThrough(
        { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'high' }], stream_options: { include_usage: true } },
        splitEvery(derived, 7),
      );
      expect(events.at(-1)).toBe('[DONE]');
      expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
      expect(
        chunks.every(
          (chunk) => chunk.id === 'chatcmpl-tS77aIl-4ZvV7w_A9rTBBg' && chunk.model === 'gemini-2.5-flash' && chunk.object === 'chat.completion.chunk',
        ),
      ).toBe(true);
      expect(textOf(chunks)).toBe(expected);
      const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
      expect(finish.map((chunk) => chunk.choices[0].finish_reason)).toEqual(['stop']);
      const last = chunks.at(-1);
      expect(last.choices).toEqual([]);
      expect(last.usage).toEqual({ prompt_tokens: 20, completion_tokens: 513, total_tokens: 533, completion_tokens_details: { reasoning_tokens: 260 } });
      expect(usages).toEqual([last.usage]);

      // The same stream from the recording's JSON, without include_usage: no usage chunk, usage still reported.
      const plain = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'high' }] }, [
        recordingSse(recording('gemini_stream_text_recording.json')),
      ]);
      expect(textOf(plain.chunks)).toBe(expected);
      expect(plain.chunks.some((chunk) => chunk.usage)).toBe(false);
      expect(plain.usages).toHaveLength(1);
    });

    it('ends the recorded MAX_TOKENS stream with finish_reason length', async () => {
      const { chunks, usages } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'why is the sky blue?' }] }, [
        readRecording('gemini_stream_max_tokens.DERIVED.sse'),
      ]);
      expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
      expect(usages).toEqual([{ prompt_tokens: 7, completion_tokens: 198, total_tokens: 205, completion_tokens_details: { reasoning_tokens: 45 } }]);
    });

    it('streams the recorded function call as one tool call with an id, its whole arguments, and tool_calls', async () => {
      const exchanges = recording('gemini_stream_function_call_recording.json');
      const tools = [
        {
          type: 'function',
          function: {
            name: 'customDivide',
            description: 'Custom divide function',
            parameters: { type: 'object', properties: { numerator: { type: 'number' }, denominator: { type: 'number' } } },
          },
        },
      ];
      const first = { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'what is the result of 100/2' }], tools };
      const { chunks } = await streamThrough(first, [recordingSse(exchanges, 0)]);
      const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
      expect(calls[0]).toEqual({
        index: 0,
        id: expect.stringMatching(/^call_[0-9a-f]{16}$/),
        type: 'function',
        function: { name: 'customDivide', arguments: '' },
      });
      expect(
        JSON.parse(
          calls
            .slice(1)
            .map((call: any) => call.function.arguments)
            .join(''),
        ),
      ).toEqual({ denominator: 2, numerator: 100 });
      expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');

      // The recorded second turn: the unsigned call (gemini-2.0 signs nothing) is sent back with Google's skip value.
      const second = sentBody({
        ...first,
        messages: [
          ...first.messages,
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: calls[0].id, type: 'function', function: { name: 'customDivide', arguments: '{"denominator":2,"numerator":100}' } }],
          },
          { role: 'user', content: 'what is the result of 50/2?' },
        ],
      });
      expect(second.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
      delete second.contents[1].parts[0].thoughtSignature;
      expect(second.contents).toEqual(exchanges.interactions[1].request.bodySegments[0].contents);
      const next = await streamThrough(first, [recordingSse(exchanges, 1)]);
      expect(next.chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []).at(-1).function.arguments).toBe('{"denominator":2,"numerator":50}');
    });

    it('turns an error chunk after the stream started into an error event and [DONE]', async () => {
      const error = recording('gemini_stream_error_404_recording.json').interactions[0].response.bodySegments[0];
      const text = recording('gemini_stream_text_recording.json').interactions[0].response.bodySegments[0];
      const { events, chunks } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }, [
        `data: ${JSON.stringify(text)}\r\n\r\n`,
        `data: ${JSON.stringify(error)}\r\n\r\n`,
      ]);
      expect(textOf(chunks)).toBe(text.candidates[0].content.parts[0].text);
      expect(events.at(-2).error).toMatchObject({ code: 'NOT_FOUND', provider: 'google', message: expect.stringContaining('is not found') });
      expect(events.at(-1)).toBe('[DONE]');
    });

    it('turns a stream that ends without a finish reason into an error event', async () => {
      const text = recording('gemini_stream_text_recording.json').interactions[0].response.bodySegments[0];
      const { events } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }, [
        `data: ${JSON.stringify(text)}\r\n\r\n`,
      ]);
      expect(events.at(-2).error).toMatchObject({ code: 'provider_stream_error', provider: 'google' });
      expect(events.at(-1)).toBe('[DONE]');
    });
  });

  describe('Vertex AI streamGenerateContent', () => {
    it('reads the recorded Vertex stream, whose usage only arrives on the last chunk', async () => {
      const exchange = recording('vertex_gemini_stream_text_recording.json');
      const request = {
        model: 'gemini-2.5-flash',
        messages: [
          { role: 'system', content: 'I say high you say low, then tell me why is the sky blue.' },
          { role: 'user', content: 'high' },
        ],
        max_tokens: 200,
        stream: true,
        stream_options: { include_usage: true },
      };
      const prepared: any = await vertexAiProvider.adapter.prepare(chatCall(request, vertexTarget) as ProviderCall);
      expect(prepared.url.href).toBe(
        'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      );
      const recorded = exchange.interactions[0].request.bodySegments[0];
      const sent = JSON.parse(prepared.body);
      expect(sent.contents).toEqual(recorded.contents);
      expect(sent.systemInstruction.parts).toEqual(recorded.systemInstruction.parts);
      expect(sent.generationConfig.maxOutputTokens).toBe(200);

      const usages: any[] = [];
      const events = await runTransform(
        prepared.streamTransform((usage: any) => usages.push(usage)),
        [recordingSse(exchange)],
      );
      const chunks = events.filter((event) => event !== '[DONE]');
      expect(textOf(chunks)).toBe(exchange.interactions[0].response.bodySegments.map((segment: any) => segment.candidates[0].content.parts[0].text).join(''));
      expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason).choices[0].finish_reason).toBe('length');
      expect(chunks.at(-1).usage).toEqual({
        prompt_tokens: 17,
        completion_tokens: 197,
        total_tokens: 214,
        completion_tokens_details: { reasoning_tokens: 65 },
      });
      expect(usages).toHaveLength(1);
    });
  });
});
