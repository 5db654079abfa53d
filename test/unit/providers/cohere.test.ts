import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../lib/core/errors';
import { checkChatRequest, cohereBodyFor, prepareCohere, replayCohereStream } from '../../support/fakes/cohere';
import { streamedText } from '../../support/fakes/azure';
import { readRecording, readRecordingBytes, recordingsPresent } from '../../support/recordings';

/** The JSON lines of a stream's events. */
const jsonLines = (text: string) => text.split('\n').filter((line) => line.trim());

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

// The whole recorded exchanges are replayed only from the recordings beside the repository, read inside
// each test, so a clone without them collects and skips these; the inline tests below cover the rest.
describe.skipIf(!recordingsPresent)('cohere: recorded transcripts', () => {
  const request = { model: 'command-r-plus-08-2024', content: 'Coca-Cola?' };
  const stream = () => jsonLines(readRecording('cohere_v2_chat_stream_events.jsonl'));
  const streamedUsage = { prompt_tokens: 186, completion_tokens: 105, total_tokens: 291 };

  it('maps the non-streamed chat response field by field, usage from tokens (not billed units)', () => {
    const prepared = prepareCohere({ model: request.model, messages: [{ role: 'user', content: request.content }] });
    const bytes = readRecordingBytes('cohere_v2_chat_nonstream.json');
    const { body, usage } = prepared.readResponse(bytes);
    const completion = JSON.parse(body.toString());
    expect(completion).toEqual({
      id: '2b1de636-9884-4973-ba11-108f95a2d37f',
      object: 'chat.completion',
      created: expect.any(Number),
      model: request.model,
      choices: [
        { index: 0, message: { role: 'assistant', content: JSON.parse(bytes.toString()).message.content[0].text }, finish_reason: 'stop', logprobs: null },
      ],
      usage: { prompt_tokens: 186, completion_tokens: 93, total_tokens: 279 },
    });
    expect(usage).toEqual(completion.usage);
  });

  it('maps the stream: id from message-start, role first, text deltas, stop, usage chunk, [DONE]', async () => {
    const lines = stream();
    const { events, usages } = await replayCohereStream(lines, { includeUsage: true, splitEvery: 9 });
    const expectedText = lines
      .map((line) => JSON.parse(line))
      .filter((event) => event.type === 'content-delta')
      .map((event) => event.delta.message.content.text)
      .join('');
    expect(expectedText).toMatch(/^Coca-Cola is a carbonated soft drink/);
    for (const event of events.slice(0, -1))
      expect(event).toMatchObject({ id: 'a8fc192e-4bb8-4e15-ae1f-a174e8b02ae8', object: 'chat.completion.chunk', model: 'command-r-plus-08-2024' });
    expect(events[0].choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
    expect(streamedText(events)).toBe(expectedText);
    const finishing = events.filter((event) => event !== '[DONE]' && event.choices[0]?.finish_reason);
    expect(finishing.map((event) => event.choices[0])).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    expect(events.at(-2)).toMatchObject({ choices: [], usage: streamedUsage });
    expect(events.at(-1)).toBe('[DONE]');
    expect(usages).toEqual([streamedUsage]);
  });

  it('sends no usage chunk unless asked, and still reports usage', async () => {
    const { events, usages } = await replayCohereStream(stream());
    expect(events.some((event) => event !== '[DONE]' && event.usage)).toBe(false);
    expect(usages).toHaveLength(1);
  });
});

describe('cohere: streamed tool calls and failures', () => {
  // A plan in two pieces, then one call whose arguments come in pieces and one whose tool-call-start carries them all.
  const toolCall = (index: number, id: string, args: string) => ({
    type: 'tool-call-start',
    index,
    delta: { message: { tool_calls: { id, type: 'function', function: { name: 'get_weather', arguments: args } } } },
  });
  const argumentPiece = (arguments_: string) => ({
    type: 'tool-call-delta',
    index: 0,
    delta: { message: { tool_calls: { function: { arguments: arguments_ } } } },
  });
  const toolStream = [
    { id: 'm1', type: 'message-start' },
    { type: 'tool-plan-delta', delta: { message: { tool_plan: 'I will check ' } } },
    { type: 'tool-plan-delta', delta: { message: { tool_plan: 'the weather.' } } },
    toolCall(0, 'get_weather_a1', ''),
    argumentPiece('{"location":'),
    argumentPiece('"Paris"}'),
    { type: 'tool-call-end', index: 0 },
    toolCall(1, 'get_weather_b2', '{"location":"Rome"}'),
    { type: 'tool-call-end', index: 1 },
    {
      type: 'message-end',
      delta: {
        finish_reason: 'TOOL_CALL',
        usage: { billed_units: { input_tokens: 5, output_tokens: 9 }, tokens: { input_tokens: 50, output_tokens: 9 }, cached_tokens: 16 },
      },
    },
  ];

  it('maps tool calls with stable indices and argument pieces; the tool plan is dropped under strict compliance', async () => {
    const { events, usages } = await replayCohereStream(toolStream);
    const deltas = events.filter((event) => event !== '[DONE]').map((event) => event.choices[0].delta);
    expect(deltas.some((delta) => delta.content_blocks)).toBe(false);
    const calls = deltas.filter((delta) => delta.tool_calls).map((delta) => delta.tool_calls[0]);
    expect(calls).toEqual([
      { index: 0, id: 'get_weather_a1', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"location":' } },
      { index: 0, function: { arguments: '"Paris"}' } },
      { index: 1, id: 'get_weather_b2', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"location":"Rome"}' } },
    ]);
    expect(events.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(usages).toEqual([{ prompt_tokens: 50, completion_tokens: 9, total_tokens: 59, prompt_tokens_details: { cached_tokens: 16 } }]);
  });

  it('exposes the tool plan as a thinking content block when strict compliance is off', async () => {
    const { events } = await replayCohereStream(toolStream, { strictApiCompliance: false });
    const blocks = events
      .filter((event) => event !== '[DONE]' && event.choices[0].delta.content_blocks)
      .map((event) => event.choices[0].delta.content_blocks[0]);
    expect(blocks).toEqual([
      { index: 0, type: 'thinking', thinking: 'I will check ' },
      { index: 0, type: 'thinking', thinking: 'the weather.' },
    ]);
  });

  it('turns a message-end with ERROR into an error event after what was sent, then [DONE]', async () => {
    const { events, usages } = await replayCohereStream([
      { id: 'm2', type: 'message-start' },
      { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Half an ans' } } } },
      { type: 'message-end', delta: { finish_reason: 'ERROR', error: 'internal model failure', usage: { tokens: { input_tokens: 4, output_tokens: 3 } } } },
    ]);
    expect(streamedText(events)).toBe('Half an ans');
    expect(events.at(-2)).toEqual({
      error: { message: 'internal model failure', type: 'provider_error', param: null, code: 'provider_error', provider: 'cohere' },
    });
    expect(events.at(-1)).toBe('[DONE]');
    expect(usages).toEqual([{ prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 }]);
  });

  it('maps MAX_TOKENS to length and a non-streamed tool call with its plan', () => {
    const prepared = prepareCohere({ model: 'command-a', messages: [{ role: 'user', content: 'weather?' }] }, { strictApiCompliance: false });
    const response = {
      id: 'r1',
      finish_reason: 'TOOL_CALL',
      message: {
        role: 'assistant',
        tool_plan: 'Look it up.',
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
      },
    };
    const completion = JSON.parse(prepared.readResponse(Buffer.from(JSON.stringify(response))).body.toString());
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
        content_blocks: [{ type: 'thinking', thinking: 'Look it up.' }],
      },
    });
    const long = { id: 'r2', finish_reason: 'MAX_TOKENS', message: { role: 'assistant', content: [{ type: 'text', text: 'cut' }] } };
    expect(JSON.parse(prepared.readResponse(Buffer.from(JSON.stringify(long))).body.toString()).choices[0].finish_reason).toBe('length');
    expect(() => prepared.readResponse(Buffer.from(JSON.stringify({ ...long, finish_reason: 'TIMEOUT' })))).toThrow(GatewayError);
  });

  it('keeps a Cohere error status and message', () => {
    const error = prepareCohere({ model: 'c', messages: [{ role: 'user', content: 'x' }] }).readError(
      429,
      Buffer.from('{"id":"e1","message":"You are using a Trial key, which is limited to 10 API calls / minute."}'),
      {},
    );
    expect(error.status).toBe(429);
    expect(error.toBody().error).toMatchObject({
      message: 'You are using a Trial key, which is limited to 10 API calls / minute.',
      provider: 'cohere',
      type: 'rate_limit_error',
    });
  });
});

describe('cohere: request mapping', () => {
  it('maps a multi-turn tool conversation with an image and every sampling parameter', () => {
    const body = cohereBodyFor({
      model: 'command-a-vision',
      max_completion_tokens: 300,
      temperature: 0.2,
      top_p: 1,
      top_k: 40,
      stop: 'END',
      seed: 11,
      frequency_penalty: 0.1,
      presence_penalty: 0.3,
      user: 'u-1',
      parallel_tool_calls: true,
      tools: [weatherTool],
      tool_choice: 'auto',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Where is this, and the weather?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_abc', content: [{ type: 'text', text: '18°C' }] },
        { role: 'assistant', content: 'Paris, 18°C.', name: 'bot' },
        { role: 'user', content: 'And tomorrow?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_def', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'call_def', content: '20°C' },
      ],
    });
    expect(body).toEqual({
      model: 'command-a-vision',
      max_tokens: 300,
      temperature: 0.2,
      p: 0.99,
      k: 40,
      stop_sequences: ['END'],
      seed: 11,
      frequency_penalty: 0.1,
      presence_penalty: 0.3,
      tools: [weatherTool],
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Where is this, and the weather?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
          ],
        },
        { role: 'assistant', tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_abc', content: '18°C' },
        { role: 'assistant', content: 'Paris, 18°C.' },
        { role: 'user', content: 'And tomorrow?' },
        { role: 'assistant', tool_calls: [{ id: 'call_def', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_def', content: '20°C' },
      ],
    });
    expect(checkChatRequest(body)).toEqual([]);
  });

  it('maps tool_choice: required → REQUIRED, none → NONE, a named function → only that tool, REQUIRED', () => {
    const otherTool = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } };
    const base = { model: 'c', messages: [{ role: 'user', content: 'x' }], tools: [weatherTool, otherTool] };
    expect(cohereBodyFor({ ...base, tool_choice: 'required' }).tool_choice).toBe('REQUIRED');
    expect(cohereBodyFor({ ...base, tool_choice: 'none' }).tool_choice).toBe('NONE');
    const named = cohereBodyFor({ ...base, tool_choice: { type: 'function', function: { name: 'get_time' } } });
    expect(named.tool_choice).toBe('REQUIRED');
    expect(named.tools.map((tool: any) => tool.function.name)).toEqual(['get_time']);
    expect(() => cohereBodyFor({ ...base, tool_choice: { type: 'function', function: { name: 'nope' } } })).toThrow(/not in tools/);
    const strict = cohereBodyFor({ ...base, tools: [{ ...weatherTool, function: { ...weatherTool.function, strict: true } }] });
    expect(strict.strict_tools).toBe(true);
    expect(strict.tools[0].function.strict).toBeUndefined();
  });

  it('maps response_format json_object and json_schema', () => {
    const base = { model: 'c', messages: [{ role: 'user', content: 'x' }] };
    expect(cohereBodyFor({ ...base, response_format: { type: 'json_object' } }).response_format).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    expect(cohereBodyFor({ ...base, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }).response_format).toEqual({
      type: 'json_object',
      json_schema: schema,
    });
    expect(cohereBodyFor({ ...base, response_format: { type: 'text' } }).response_format).toBeUndefined();
  });

  it('answers 400 for what Cohere cannot do, naming the parameter', () => {
    const base = { model: 'c', messages: [{ role: 'user', content: 'x' }] };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ n: 2 }, 'n'],
      [{ logprobs: true }, 'logprobs'],
      [{ logit_bias: { '1': 5 } }, 'logit_bias'],
      [{ thinking: { type: 'enabled', budget_tokens: 100 } }, 'thinking'],
      [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role'],
      [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id'],
      [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }] }, 'messages[0].content[0]'],
    ];
    for (const [extra, param] of cases) {
      try {
        cohereBodyFor({ ...base, ...extra });
        expect.unreachable(`${param} should be refused`);
      } catch (error) {
        expect(error).toMatchObject({ status: 400, param });
      }
    }
    expect(() => prepareCohere({ model: 'c', prompt: 'x' }, { operation: 'completions' })).toThrow(/not supported by cohere/);
  });

  it('sends thinking with strict compliance off', () => {
    const body = cohereBodyFor(
      { model: 'command-a-reasoning', messages: [{ role: 'user', content: 'x' }], thinking: { type: 'enabled', budget_tokens: 2000 } },
      { strictApiCompliance: false },
    );
    expect(body.thinking).toEqual({ type: 'enabled', token_budget: 2000 });
  });

  it('targets /v2/chat with a bearer key', () => {
    const prepared = prepareCohere({ model: 'c', messages: [{ role: 'user', content: 'x' }] });
    expect(prepared.url.href).toBe('https://api.cohere.com/v2/chat');
    expect(prepared.headers.authorization).toBe('Bearer cohere-test-key');
  });
});

describe('cohere: embeddings', () => {
  const response = {
    id: 'e',
    embeddings: {
      float: [
        [0.5, -1.25, 3],
        [0, 1, 2],
      ],
    },
    texts: ['a', 'b'],
    meta: { billed_units: { input_tokens: 6 } },
  };

  it('maps the request: texts, input_type default search_document, float types, dimensions', () => {
    const prepared = prepareCohere({ model: 'embed-v4.0', input: ['a', 'b'], dimensions: 256 }, { operation: 'embeddings' });
    expect(prepared.url.href).toBe('https://api.cohere.com/v2/embed');
    expect(JSON.parse(String(prepared.body))).toEqual({
      model: 'embed-v4.0',
      texts: ['a', 'b'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
    const query = prepareCohere({ model: 'embed-v4.0', input: 'q', input_type: 'search_query' }, { operation: 'embeddings' });
    expect(JSON.parse(String(query.body))).toMatchObject({ texts: ['q'], input_type: 'search_query' });
    expect(() => prepareCohere({ model: 'e', input: [1, 2, 3] }, { operation: 'embeddings' })).toThrow(/token ids/);
  });

  it('answers an OpenAI embedding list, as floats or as base64 float32 little-endian', () => {
    const floats = prepareCohere({ model: 'embed-v4.0', input: ['a', 'b'] }, { operation: 'embeddings' }).readResponse(Buffer.from(JSON.stringify(response)));
    expect(JSON.parse(floats.body.toString())).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1.25, 3] },
        { object: 'embedding', index: 1, embedding: [0, 1, 2] },
      ],
      model: 'embed-v4.0',
      usage: { prompt_tokens: 6, total_tokens: 6 },
    });
    expect(floats.usage).toEqual({ prompt_tokens: 6, completion_tokens: 0, total_tokens: 6 });
    const base64 = prepareCohere({ model: 'embed-v4.0', input: ['a', 'b'], encoding_format: 'base64' }, { operation: 'embeddings' }).readResponse(
      Buffer.from(JSON.stringify(response)),
    );
    const encoded = JSON.parse(base64.body.toString()).data[0].embedding;
    const bytes = Buffer.from(encoded, 'base64');
    expect([0, 4, 8].map((offset) => bytes.readFloatLE(offset))).toEqual([0.5, -1.25, 3]);
  });
});
