import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../lib/core/errors';
import { ChatChunkEmitter } from '../../../lib/providers/openai-format/chunk-emitter';
import { parseSse } from '../../support/sse';

function emitter(includeUsage: boolean) {
  let out = '';
  const usages: unknown[] = [];
  const instance = new ChatChunkEmitter({
    id: 'chatcmpl-1',
    model: 'm',
    created: 1,
    includeUsage,
    onUsage: (usage) => usages.push(usage),
    push: (text) => (out += text),
  });
  return { instance, usages, events: () => parseSse(out).map((event) => (event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data))) };
}

describe('ChatChunkEmitter', () => {
  it('starts with the role, streams text and tool calls with stable indices, and ends with usage and [DONE]', () => {
    const { instance, usages, events } = emitter(true);
    instance.text('Hel');
    instance.text('lo');
    instance.toolCallStart(0, 'call_1', 'lookup');
    instance.toolCallArguments(0, '{"q":');
    instance.toolCallArguments(0, '"x"}');
    instance.finish('tool_calls');
    instance.usage({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    instance.end();
    const all = events();
    expect(all[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(all.slice(1, 3).map((chunk: any) => chunk.choices[0].delta.content)).toEqual(['Hel', 'lo']);
    expect(all[3].choices[0].delta.tool_calls).toEqual([{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } }]);
    expect(all[4].choices[0].delta.tool_calls[0]).toEqual({ index: 0, function: { arguments: '{"q":' } });
    expect(all[6].choices[0].finish_reason).toBe('tool_calls');
    expect(all[7]).toMatchObject({ object: 'chat.completion.chunk', choices: [], usage: { total_tokens: 7 } });
    expect(all.at(-1)).toBe('[DONE]');
    expect(usages).toEqual([{ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }]);
  });

  it('reports usage but sends no usage chunk when the client did not ask for one', () => {
    const { instance, usages, events } = emitter(false);
    instance.text('x');
    instance.usage({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
    instance.finish('stop');
    instance.end();
    expect(events().some((event: any) => event !== '[DONE]' && event.usage)).toBe(false);
    expect(usages).toHaveLength(1);
  });

  it('ends with an error event and [DONE], and ignores anything after', () => {
    const { instance, events } = emitter(true);
    instance.text('partial');
    instance.error(new GatewayError(529, 'Overloaded', { code: 'overloaded_error', provider: 'anthropic' }));
    instance.text('ignored');
    instance.end();
    const all = events();
    expect(all.at(-2).error).toMatchObject({ message: 'Overloaded', provider: 'anthropic' });
    expect(all.at(-1)).toBe('[DONE]');
    expect(all.filter((event: any) => event === '[DONE]')).toHaveLength(1);
  });
});
