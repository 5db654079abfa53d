import { describe, expect, it } from 'vitest';
import type { AssistantMessage, ChatCompletion, FinishReason, Usage } from '../../../lib/providers/openai-format/types';
import { responseFromChat, usageFromChat } from '../../../lib/providers/responses-format/from-chat';
import { baseResponse } from '../../../lib/providers/responses-format/response-object';

const base = () => baseResponse({ model: 'gpt-4o-mini', input: 'Hi', max_output_tokens: 50 }, { id: 'resp_1', createdAt: 1_700_000_000 });

const completion = (message: Partial<AssistantMessage>, finishReason: FinishReason | null = 'stop', usage?: Usage): ChatCompletion => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finishReason, logprobs: null }],
  ...(usage === undefined ? {} : { usage }),
});

describe('usageFromChat', () => {
  it('maps the counts and their details', () => {
    expect(
      usageFromChat({
        prompt_tokens: 100,
        completion_tokens: 40,
        total_tokens: 140,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 12 },
      }),
    ).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 64 },
      output_tokens: 40,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 140,
    });
  });

  it('reports absent details as zero, and no usage as null', () => {
    expect(usageFromChat({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 })).toEqual({
      input_tokens: 3,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 2,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 5,
    });
    expect(usageFromChat(undefined)).toBeNull();
  });
});

describe('responseFromChat', () => {
  it('turns a text answer into a completed message with output_text', () => {
    const response = responseFromChat(completion({ content: 'Hello!' }, 'stop', { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }), base());
    expect(response).toMatchObject({
      id: 'resp_1',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      incomplete_details: null,
      model: 'gpt-4o-mini-2024-07-18',
      max_output_tokens: 50,
      output_text: 'Hello!',
      usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
    });
    expect(response.output).toEqual([
      {
        type: 'message',
        id: expect.stringMatching(/^msg_/),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello!', annotations: [] }],
      },
    ]);
  });

  it('lists one function_call item per tool call, after the message', () => {
    const response = responseFromChat(
      completion(
        {
          content: 'Checking both.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        'tool_calls',
      ),
      base(),
    );
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call']);
    expect(response.output[1]).toEqual({
      type: 'function_call',
      id: expect.stringMatching(/^fc_/),
      call_id: 'call_1',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });
    expect(response.output[2]).toMatchObject({ call_id: 'call_2', arguments: '{"city":"Rome"}' });
    expect(response.output[1]!.id).not.toBe(response.output[2]!.id);
  });

  it('lists only the function calls when there is no text', () => {
    const response = responseFromChat(
      completion({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls'),
      base(),
    );
    expect(response.output.map((item) => item.type)).toEqual(['function_call']);
    expect(response.output_text).toBe('');
  });

  it('puts thinking first, as a reasoning item with a summary', () => {
    const response = responseFromChat(
      completion({
        content: '42',
        content_blocks: [
          { type: 'thinking', thinking: 'The question is old.', signature: 'sig' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'thinking', thinking: 'The answer is known.' },
          { type: 'text', text: '42' },
        ],
      }),
      base(),
    );
    expect(response.output[0]).toEqual({
      type: 'reasoning',
      id: expect.stringMatching(/^rs_/),
      summary: [
        { type: 'summary_text', text: 'The question is old.' },
        { type: 'summary_text', text: 'The answer is known.' },
      ],
    });
    expect(response.output[1]).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: '42' }] });
    expect(response.output_text).toBe('42');
  });

  it('gives no reasoning item for redacted thinking only', () => {
    const response = responseFromChat(completion({ content: 'x', content_blocks: [{ type: 'redacted_thinking', data: 'opaque' }] }), base());
    expect(response.output.map((item) => item.type)).toEqual(['message']);
  });

  it('reports a refusal as a refusal part', () => {
    const response = responseFromChat(completion({ content: null, refusal: 'I cannot help with that.' }), base());
    expect(response.output).toEqual([
      {
        type: 'message',
        id: expect.stringMatching(/^msg_/),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'refusal', refusal: 'I cannot help with that.' }],
      },
    ]);
    expect(response.output_text).toBe('');
  });

  it('reports an answer cut at the token limit as incomplete, its items too', () => {
    const response = responseFromChat(
      completion({ content: 'The first half', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }, 'length'),
      base(),
    );
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(response.output[1]).toMatchObject({ type: 'function_call', status: 'incomplete' });
    expect(response.output_text).toBe('The first half');
  });

  it('reports a filtered answer as incomplete for content_filter', () => {
    const response = responseFromChat(completion({ content: '' }, 'content_filter'), base());
    expect(response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
  });

  it('still gives an empty answer its message', () => {
    const response = responseFromChat(completion({ content: '' }), base());
    expect(response.output).toEqual([
      {
        type: 'message',
        id: expect.stringMatching(/^msg_/),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: '', annotations: [] }],
      },
    ]);
    expect(response.usage).toBeNull();
  });

  it('keeps the request’s model when the completion names none, and leaves the base untouched', () => {
    const echoed = base();
    const response = responseFromChat({ ...completion({ content: 'x' }), model: '' }, echoed);
    expect(response.model).toBe('gpt-4o-mini');
    expect(echoed.output).toEqual([]);
    expect(echoed.status).toBe('in_progress');
  });
});
