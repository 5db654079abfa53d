import { describe, expect, it } from 'vitest';
import { inputItems } from '../../../lib/responses/input-items';
import type { ConversationItem } from '../../../lib/providers/responses-format/types';

describe('inputItems', () => {
  it('stores a string input as one completed user message of input_text', () => {
    expect(inputItems({ model: 'm', input: 'Hello' })).toEqual([
      { type: 'message', id: expect.stringMatching(/^msg_/), role: 'user', content: [{ type: 'input_text', text: 'Hello' }], status: 'completed' },
    ]);
  });

  it('gives list items the ids OpenAI gives them, keeping ids they have', () => {
    const items = inputItems({
      model: 'm',
      input: [
        { type: 'message', role: 'user', content: 'Hi' },
        { type: 'message', id: 'msg_given', role: 'user', content: [{ type: 'input_text', text: 'Again' }], status: 'completed' },
        { type: 'reasoning', summary: [] },
        { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
      ],
    });
    expect(items.map((item) => item.id)).toEqual([
      expect.stringMatching(/^msg_/),
      'msg_given',
      expect.stringMatching(/^rs_/),
      expect.stringMatching(/^fc_/),
      expect.stringMatching(/^fco_/),
    ]);
    expect(items[0]).toEqual({ type: 'message', id: items[0]!.id, role: 'user', content: [{ type: 'input_text', text: 'Hi' }], status: 'completed' });
    expect(items[2]).toEqual({ type: 'reasoning', id: items[2]!.id, summary: [] });
    expect(items[3]).toEqual({ type: 'function_call', id: items[3]!.id, call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' });
    expect(items[4]).toEqual({ type: 'function_call_output', id: items[4]!.id, call_id: 'call_1', output: 'ok', status: 'completed' });
    expect(new Set(items.map((item) => item.id)).size).toBe(5);
  });

  it('types a message given without its type, and keeps part content as it came', () => {
    const parts = [
      { type: 'input_text' as const, text: 'What is this?' },
      { type: 'input_image' as const, image_url: 'https://example.com/a.png', detail: 'auto' as const },
    ];
    expect(inputItems({ model: 'm', input: [{ role: 'developer', content: parts } as ConversationItem] })).toEqual([
      { type: 'message', id: expect.stringMatching(/^msg_/), role: 'developer', content: parts, status: 'completed' },
    ]);
  });

  it('stores an assistant message’s string content as output_text, as OpenAI lists the model’s messages', () => {
    expect(inputItems({ model: 'm', input: [{ type: 'message', role: 'assistant', content: 'Sure.' }] })[0]).toMatchObject({
      content: [{ type: 'output_text', text: 'Sure.', annotations: [] }],
    });
  });

  it('stores nothing for a request without input, and does not change the request', () => {
    expect(inputItems({ model: 'm' })).toEqual([]);
    const input: ConversationItem[] = [{ type: 'message', role: 'user', content: 'Hi' }];
    inputItems({ model: 'm', input });
    expect(input).toEqual([{ type: 'message', role: 'user', content: 'Hi' }]);
  });
});
