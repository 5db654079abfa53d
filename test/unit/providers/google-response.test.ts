import { describe, expect, it } from 'vitest';
import { mapFinishReason } from '../../../lib/providers/google/finish-reason';
import { toChatCompletion } from '../../../lib/providers/google/response';
import { geminiStreamTransform } from '../../../lib/providers/google/stream';
import { runTransform } from '../../support/fakes/google';

const read = (response: object, strictApiCompliance = true) => toChatCompletion(response, { model: 'gemini-2.5-pro', strictApiCompliance });

describe('Gemini answers → OpenAI (cases the recordings do not cover)', () => {
  it('maps finish reasons: a function call makes STOP tool_calls; the safety family is content_filter', () => {
    expect(mapFinishReason('STOP', false)).toBe('stop');
    expect(mapFinishReason('STOP', true)).toBe('tool_calls');
    expect(mapFinishReason('MAX_TOKENS', true)).toBe('length');
    for (const reason of ['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII']) expect(mapFinishReason(reason, false)).toBe('content_filter');
    expect(mapFinishReason('MALFORMED_FUNCTION_CALL', false)).toBe('stop');
    expect(mapFinishReason(undefined, false)).toBe('stop');
  });

  it('answers a blocked prompt with no content and content_filter, keeping the usage', () => {
    const { completion, usage } = read({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 } });
    expect(completion.choices).toEqual([{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter', logprobs: null }]);
    expect(completion.model).toBe('gemini-2.5-pro');
    expect(usage).toEqual({ prompt_tokens: 9, completion_tokens: 0, total_tokens: 9 });
  });

  it('returns every candidate as a choice, and thought summaries only as content_blocks with strict compliance off', () => {
    const response = {
      candidates: [
        { content: { role: 'model', parts: [{ text: 'Let me think', thought: true }, { text: 'A' }] }, finishReason: 'STOP', index: 0 },
        { content: { role: 'model', parts: [{ text: 'B' }] }, finishReason: 'SAFETY', index: 1 },
      ],
    };
    const strict = read(response).completion;
    expect(strict.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [0, 'A', 'stop'],
      [1, 'B', 'content_filter'],
    ]);
    expect(strict.choices[0].message.content_blocks).toBeUndefined();
    expect(read(response, false).completion.choices[0].message.content_blocks).toEqual([
      { type: 'thinking', thinking: 'Let me think' },
      { type: 'text', text: 'A' },
    ]);
  });

  it('streams parallel function calls with separate indices and ids, and a blocked prompt as content_filter', async () => {
    const options = { provider: 'google', model: 'gemini-2.5-pro', includeUsage: false, strictApiCompliance: true, onUsage: () => {} };
    const calls = {
      candidates: [
        {
          content: { parts: [{ functionCall: { name: 'a', args: { x: 1 } }, thoughtSignature: 'c2ln' }, { functionCall: { name: 'b' } }] },
          finishReason: 'STOP',
        },
      ],
    };
    const events = await runTransform(geminiStreamTransform(options), [`data: ${JSON.stringify(calls)}\n\n`]);
    const starts = events.flatMap((event) => event.choices?.[0]?.delta?.tool_calls ?? []).filter((call: any) => call.id);
    expect(starts.map((call: any) => [call.index, call.function.name])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ]);
    expect(starts[0].id).not.toBe(starts[1].id);
    expect(
      events
        .flatMap((event) => event.choices?.[0]?.delta?.tool_calls ?? [])
        .filter((call: any) => !call.id)
        .map((call: any) => call.function.arguments),
    ).toEqual(['{"x":1}', '{}']);
    expect(events.at(-2).choices[0].finish_reason).toBe('tool_calls');

    const blocked = await runTransform(geminiStreamTransform(options), [
      `data: ${JSON.stringify({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } })}\r\n\r\n`,
    ]);
    expect(blocked.at(-2).choices[0].finish_reason).toBe('content_filter');
    expect(blocked.at(-1)).toBe('[DONE]');
  });
});
