import { describe, expect, it } from 'vitest';
import { anthropicErrorBody, anthropicErrorType } from '../../../lib/providers/messages-format/error-body';
import { messagesEventStream } from '../../../lib/providers/messages-format/events-from-chat';
import { messageFromChat } from '../../../lib/providers/messages-format/from-chat';
import { GatewayError } from '../../../lib/core/errors';
import type { ChatCompletion } from '../../../lib/providers/openai-format/types';
import { parseSse } from '../../support/sse';

const frame = { id: 'msg_gateway', model: 'asked-for' };

const completion = (message: Record<string, unknown>, finish: string, usage?: Record<string, unknown>): ChatCompletion =>
  ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini-2024',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish, logprobs: null }],
    usage,
  }) as ChatCompletion;

describe('a chat completion as an Anthropic message', () => {
  it('orders thinking, text and tool use, and counts cached tokens apart', () => {
    const message = messageFromChat(
      completion(
        {
          content: 'Checking.',
          content_blocks: [
            { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
            { type: 'redacted_thinking', data: 'xx' },
            { type: 'text', text: 'Checking.' },
          ],
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        'tool_calls',
        { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39, prompt_tokens_details: { cached_tokens: 10 } },
      ),
      frame,
    );
    expect(message).toEqual({
      id: 'msg_gateway',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-mini-2024',
      content: [
        { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
        { type: 'redacted_thinking', data: 'xx' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 9, cache_creation_input_tokens: 0, cache_read_input_tokens: 10 },
    });
  });

  it('maps finish reasons, refusals and unreadable tool arguments', () => {
    expect(messageFromChat(completion({ content: 'cut' }, 'length'), frame).stop_reason).toBe('max_tokens');
    expect(messageFromChat(completion({ content: 'no' }, 'content_filter'), frame).stop_reason).toBe('refusal');
    const refused = messageFromChat(completion({ content: null, refusal: 'I cannot help.' }, 'stop'), frame);
    expect(refused).toMatchObject({ stop_reason: 'refusal', content: [{ type: 'text', text: 'I cannot help.' }] });
    const broken = messageFromChat(
      completion({ content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 't', arguments: '{oops' } }] }, 'tool_calls'),
      frame,
    );
    expect(broken.content).toEqual([{ type: 'tool_use', id: 'c', name: 't', input: {} }]);
  });
});

/** The Anthropic events a chat stream becomes. */
async function eventsOf(chatSse: string): Promise<any[]> {
  const stream = messagesEventStream(frame);
  let out = '';
  stream.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  stream.end(chatSse);
  await ended;
  return parseSse(out).map((event) => ({ event: event.event, ...JSON.parse(event.data) }));
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usageChunk = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-x', choices: [], usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 } })}\n\n`;

describe('a chat stream as Anthropic events', () => {
  it('streams thinking, text and a tool call as blocks, then the stop reason and usage', async () => {
    const events = await eventsOf(
      chunk({ role: 'assistant', content_blocks: [{ index: 0, type: 'thinking', thinking: 'Hmm' }] }) +
        chunk({ content_blocks: [{ index: 0, type: 'thinking', signature: 'sig' }] }) +
        chunk({ content: 'Hel' }) +
        chunk({ content: 'lo' }) +
        chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }) +
        chunk({}, 'tool_calls') +
        usageChunk +
        'data: [DONE]\n\n',
    );
    for (const event of events) expect(event.event).toBe(event.type);
    expect(events.map((event) => event.type)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events[0].message).toMatchObject({
      id: 'msg_gateway',
      model: 'gpt-x',
      content: [],
      stop_reason: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    });
    expect(events[2]).toMatchObject({ index: 0, content_block: { type: 'thinking', thinking: '' } });
    expect(events[4].delta).toEqual({ type: 'signature_delta', signature: 'sig' });
    expect(events[6]).toMatchObject({ index: 1, content_block: { type: 'text', text: '' } });
    expect(events[8].delta).toEqual({ type: 'text_delta', text: 'lo' });
    expect(events[10]).toMatchObject({ index: 2, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } });
    expect(events[12].delta).toEqual({ type: 'input_json_delta', partial_json: '"Paris"}' });
    expect(events[14]).toMatchObject({ delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { input_tokens: 12, output_tokens: 4 } });
  });

  it('keeps parallel tool calls open while their arguments interleave', async () => {
    const events = await eventsOf(
      chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'one', arguments: '{"x":' } }] }) +
        chunk({ tool_calls: [{ index: 1, id: 'b', function: { name: 'two', arguments: '{"y":' } }] }) +
        chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }) +
        chunk({ tool_calls: [{ index: 1, function: { arguments: '2}' } }] }) +
        chunk({}, 'tool_calls') +
        'data: [DONE]\n\n',
    );
    const deltas = events.filter((event) => event.type === 'content_block_delta').map((event) => [event.index, event.delta.partial_json]);
    expect(deltas).toEqual([
      [0, '{"x":'],
      [1, '{"y":'],
      [0, '1}'],
      [1, '2}'],
    ]);
    expect(events.filter((event) => event.type === 'content_block_stop').map((event) => event.index)).toEqual([0, 1]);
  });

  it('ends with an error event when the chat stream fails or is cut short', async () => {
    const failed = await eventsOf(
      chunk({ content: 'partial' }) + `data: ${JSON.stringify({ error: { message: 'Slow down.', type: 'rate_limit_error' } })}\n\n`,
    );
    expect(failed.at(-1)).toEqual({ event: 'error', type: 'error', error: { type: 'rate_limit_error', message: 'Slow down.' } });
    expect(failed.map((event) => event.type)).not.toContain('message_stop');
    const cut = await eventsOf(chunk({ content: 'partial' }));
    expect(cut.at(-1)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });
});

describe("errors in Anthropic's shape", () => {
  it('keeps an Anthropic type, else maps the status', () => {
    expect(anthropicErrorType(529, 'overloaded_error')).toBe('overloaded_error');
    expect(anthropicErrorType(401, 'authentication_error')).toBe('authentication_error');
    expect(anthropicErrorType(404, 'not_found_error')).toBe('not_found_error');
    expect(anthropicErrorType(403, 'permission_error')).toBe('permission_error');
    expect(anthropicErrorType(502, 'provider_error')).toBe('api_error');
    expect(anthropicErrorType(409, 'conflict_error')).toBe('invalid_request_error');
    expect(anthropicErrorType(446, 'hooks_failed')).toBe('invalid_request_error');
    expect(anthropicErrorBody(new GatewayError(429, 'Too many.'))).toEqual({ type: 'error', error: { type: 'rate_limit_error', message: 'Too many.' } });
  });
});
