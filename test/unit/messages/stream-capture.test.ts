import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { messagesAnswerText, messagesRequestText, withMessagesAnswerText, withMessagesRequestText } from '../../../lib/guardrails/messages-text';
import { replayMessageAsSseText } from '../../../lib/cache/messages-replay';
import { captureStream } from '../../../lib/cache/stream-capture';
import { relayMessagesStream } from '../../../lib/providers/anthropic/messages';
import type { TokenUsage } from '../../../lib/core/usage';
import { parseSse } from '../../support/sse';

const message = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-6',
  content: [
    { type: 'thinking', thinking: 'Let me think about the weather in Paris for a moment.', signature: 'sig' },
    { type: 'text', text: 'I will look it up for you right away, one moment please.' },
    { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris', days: [1, 2] } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 20, output_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 5 },
};

async function captured(sse: string) {
  const capture = captureStream('messages', Readable.from([Buffer.from(sse)]));
  let relayed = '';
  capture.stream.on('data', (chunk: Buffer) => (relayed += chunk.toString()));
  return { answer: await capture.answer, relayed };
}

describe('a cached message as a stream, and a stream as the message', () => {
  it('replays a message as Anthropic events that put it back together', async () => {
    const sse = replayMessageAsSseText(message);
    const events = parseSse(sse).map((event) => JSON.parse(event.data));
    expect(events[0]).toMatchObject({ type: 'message_start', message: { content: [], stop_reason: null, usage: { input_tokens: 20, output_tokens: 0 } } });
    expect(events[1]).toEqual({ type: 'ping' });
    expect(events.slice(-2).map((event) => event.type)).toEqual(['message_delta', 'message_stop']);
    expect(events.filter((event) => event.type === 'content_block_delta' && event.index === 1).length).toBeGreaterThan(1);
    const { answer, relayed } = await captured(sse);
    expect(relayed).toBe(sse);
    expect(answer).toEqual(message);
  });

  it('keeps nothing of a stream that failed or was cut short', async () => {
    const sse = replayMessageAsSseText(message);
    const failed = sse.replace(
      /event: message_delta[\s\S]*$/,
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    );
    expect((await captured(failed)).answer).toBeUndefined();
    expect((await captured(sse.replace(/event: message_stop[\s\S]*$/, ''))).answer).toBeUndefined();
  });
});

describe("Anthropic's own stream relayed", () => {
  const relay = async (sse: string) => {
    const usages: TokenUsage[] = [];
    const stream = relayMessagesStream('anthropic', (usage) => usages.push(usage));
    let out = '';
    stream.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const ended = new Promise((resolve) => stream.on('end', resolve));
    stream.end(sse);
    await ended;
    return { out, usages };
  };

  it('passes the bytes unchanged and reports the usage as it grows', async () => {
    const sse = replayMessageAsSseText(message);
    const { out, usages } = await relay(sse);
    expect(out).toBe(sse);
    expect(usages).toEqual([
      { prompt_tokens: 25, completion_tokens: 0, total_tokens: 25, prompt_tokens_details: { cached_tokens: 5 } },
      { prompt_tokens: 25, completion_tokens: 30, total_tokens: 55, prompt_tokens_details: { cached_tokens: 5 } },
    ]);
  });

  it('adds an error event to a stream that ended before message_stop', async () => {
    const { out } = await relay(replayMessageAsSseText(message).replace(/event: message_stop[\s\S]*$/, ''));
    expect(JSON.parse(parseSse(out).at(-1)!.data)).toMatchObject({ type: 'error', error: { type: 'api_error' } });
  });
});

describe('the text guardrails read in a Messages exchange', () => {
  const body = {
    model: 'm',
    max_tokens: 10,
    messages: [
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'ok' },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't', content: 'result' },
          { type: 'text', text: 'my card is 4111' },
          { type: 'text', text: 'thanks' },
        ],
      },
    ],
  };

  it('reads and rewrites the last user text and the answer text', () => {
    expect(messagesRequestText(body)).toBe('my card is 4111\nthanks');
    const rewritten = withMessagesRequestText(body, 'my card is ****') as any;
    expect(rewritten.messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 't', content: 'result' },
      { type: 'text', text: 'my card is ****' },
    ]);
    expect(messagesAnswerText(message)).toBe('I will look it up for you right away, one moment please.');
    const answer = withMessagesAnswerText(message, 'redacted') as any;
    expect(answer.content.map((block: any) => block.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(answer.content[1].text).toBe('redacted');
  });
});
