import { describe, expect, it } from 'vitest';
import { mistralRequest, mistralToolId } from '../../../lib/providers/openai-compatible/mistral';
import { findProvider } from '../../../lib/providers/registry';
import { providerCall, replayPrepared, streamedText } from '../../support/fakes/azure';
import { thrownGatewayError } from '../../support/gateway-error';
import { readRecording, readRecordingBytes, recordingsPresent } from '../../support/recordings';

const mistral = findProvider('mistral-ai')!;
const prepare = (body: Record<string, unknown>, options: Parameters<typeof providerCall>[2] = {}) =>
  mistral.adapter.prepare(providerCall(mistral, body, { settings: { api_key: 'mistral-key' }, baseUrl: 'https://api.mistral.ai/v1', ...options }));

// The whole recorded exchanges are replayed only from the recordings beside the repository, read inside
// each test, so a clone without them collects and skips these; the inline tests below cover the rest.
describe.skipIf(!recordingsPresent)('mistral-ai: recorded transcripts', () => {
  const request = { model: 'mistral-large-latest', content: 'Coca-Cola?' };
  const usage = { prompt_tokens: 34, completion_tokens: 100, total_tokens: 134 };

  it('maps the non-streamed completion: model_length becomes length, usage is read, the rest is relayed', async () => {
    const prepared = await prepare({ model: request.model, messages: [{ role: 'user', content: request.content }] });
    const bytes = readRecordingBytes('mistral_chat_completion_nonstream.json');
    const answer = JSON.parse(bytes.toString());
    const { body, usage: read } = prepared.readResponse(bytes);
    const completion = JSON.parse(body.toString());
    expect(completion).toMatchObject({ id: answer.id, object: 'chat.completion', created: 1732548590, model: 'mistral-large-latest' });
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: answer.choices[0].message.content, tool_calls: null });
    expect(completion.choices[0].finish_reason).toBe('length');
    expect(read).toEqual(usage);

    const ended = { ...answer, choices: [{ ...answer.choices[0], finish_reason: 'model_length' }] };
    expect(JSON.parse(prepared.readResponse(Buffer.from(JSON.stringify(ended))).body.toString()).choices[0].finish_reason).toBe('length');
  });

  it('relays the stream, reading the usage Mistral puts on the final content chunk', async () => {
    const prepared = await prepare({
      model: request.model,
      messages: [{ role: 'user', content: request.content }],
      stream: true,
      stream_options: { include_usage: true },
    });
    // Mistral reports streamed usage unasked; the option is not sent.
    expect(JSON.parse(String(prepared.body)).stream_options).toBeUndefined();
    const { events, usages } = await replayPrepared(prepared, readRecording('mistral_chat_stream_text_usage_in_final_chunk.sse'), 17);
    expect(events.at(-1)).toBe('[DONE]');
    const last = events.at(-2);
    expect(last.choices[0]).toMatchObject({ delta: { content: 'izable' }, finish_reason: 'length' });
    expect(last.usage).toEqual(usage);
    expect(streamedText(events)).toMatch(/^Coca-Cola, often referred to as Coke, is a carbonated soft drink manufactured by The C/);
    expect(events[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(usages).toEqual([usage]);
  });
});

describe('mistral-ai: finish_reason "model_length"', () => {
  it('becomes length in a non-streamed answer', async () => {
    const prepared = await prepare({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const ended = {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'cut', tool_calls: null }, finish_reason: 'model_length' }],
      usage: { prompt_tokens: 3, total_tokens: 4, completion_tokens: 1 },
    };
    const { body, usage } = prepared.readResponse(Buffer.from(JSON.stringify(ended)));
    expect(JSON.parse(body.toString()).choices[0]).toMatchObject({ message: { content: 'cut' }, finish_reason: 'length' });
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 });
  });
});

describe('mistral-ai: request quirks', () => {
  const conversation = {
    model: 'mistral-large-latest',
    seed: 7,
    max_completion_tokens: 50,
    tool_choice: 'required',
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
    messages: [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_A1b2C3d4E5f6G7h8I9j0K1l2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'abcDEF123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_A1b2C3d4E5f6G7h8I9j0K1l2', content: '18°C' },
      { role: 'tool', tool_call_id: 'abcDEF123', content: '24°C' },
      { role: 'assistant', content: 'Paris 18°C, Rome 24°C.' },
      { role: 'user', content: 'And Oslo?' },
      {
        role: 'assistant',
        tool_calls: [{ id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', content: '3°C' },
    ],
  };

  it('renames seed and max_completion_tokens, sends tool_choice any, and remaps tool call ids consistently', async () => {
    const sent = JSON.parse(String((await prepare(conversation)).body));
    expect(sent).toMatchObject({ random_seed: 7, max_tokens: 50, tool_choice: 'any' });
    expect(sent.seed).toBeUndefined();
    expect(sent.max_completion_tokens).toBeUndefined();
    const [, first, paris, rome, , , second, oslo] = sent.messages;
    for (const id of [...first.tool_calls.map((call: any) => call.id), second.tool_calls[0].id, paris.tool_call_id, oslo.tool_call_id])
      expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(paris.tool_call_id).toBe(first.tool_calls[0].id);
    expect(rome.tool_call_id).toBe('abcDEF123');
    expect(first.tool_calls[1].id).toBe('abcDEF123');
    expect(oslo.tool_call_id).toBe(second.tool_calls[0].id);
    expect(first.tool_calls[0].id).not.toBe(second.tool_calls[0].id);
    // The rest of each message is kept.
    expect(first.tool_calls[0].function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(paris.content).toBe('18°C');
  });

  it('maps the same id the same way on every turn (no state between requests)', () => {
    expect(mistralToolId('call_A1b2C3d4E5f6G7h8I9j0K1l2')).toBe(mistralToolId('call_A1b2C3d4E5f6G7h8I9j0K1l2'));
    expect(mistralToolId('call_1')).not.toBe(mistralToolId('call_2'));
    expect(mistralToolId('Zz9Zz9Zz9')).toBe('Zz9Zz9Zz9');
  });

  it('leaves a body that needs nothing unchanged, so the client bytes are sent', async () => {
    const body = { model: 'mistral-small', messages: [{ role: 'user', content: 'hi' }], tool_choice: 'auto' };
    expect(mistralRequest(body)).toBe(body);
    const prepared = await prepare(body, { clientBytes: true });
    expect(Buffer.isBuffer(prepared.body)).toBe(true);
  });
});

describe('mistral-ai: finish_reason "error"', () => {
  it('is a 502 for a non-streamed answer', async () => {
    const prepared = await prepare({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const failed = {
      id: 'x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'partial' }, finish_reason: 'error' }],
    };
    const error = thrownGatewayError(() => prepared.readResponse(Buffer.from(JSON.stringify(failed))));
    expect(error.toBody().error).toMatchObject({ code: 'provider_error', provider: 'mistral-ai' });
    expect(error.status).toBe(502);
  });

  it('ends a stream with what was sent, then an error event and [DONE]', async () => {
    const prepared = await prepare({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true });
    const stream =
      [
        'data: {"id":"a","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"par"},"finish_reason":null}]}',
        'data: {"id":"a","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tial"},"finish_reason":"error"}],"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2}}',
        'data: [DONE]',
      ].join('\n\n') + '\n\n';
    const { events, usages } = await replayPrepared(prepared, stream, 5);
    expect(streamedText(events)).toBe('partial');
    expect(events[1].choices[0].finish_reason).toBeNull();
    expect(events[2].error).toMatchObject({ code: 'provider_error', provider: 'mistral-ai', type: 'provider_error' });
    expect(events[2].error.message).toMatch(/finish reason "error"/);
    expect(events.slice(3)).toEqual(['[DONE]']);
    expect(usages).toEqual([{ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }]);
  });
});
