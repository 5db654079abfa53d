import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { baseResponse } from '../../../lib/providers/responses-format/response-object';
import type { ResponseObject } from '../../../lib/providers/responses-format/types';
import { type StreamEnd, stampedEventStream } from '../../../lib/responses/stamped-events';

const base = baseResponse({ model: 'gpt-4o', previous_response_id: 'resp_gateway_previous' }, { id: 'resp_gateway', createdAt: 1700000000 });

const event = (type: string, fields: Record<string, unknown>, sequence: number) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...fields })}\n\n`;

const providerResponse = (status: string, fields: Record<string, unknown> = {}) => ({
  ...base,
  id: 'resp_provider_1',
  created_at: 1,
  previous_response_id: 'resp_provider_0',
  status,
  ...fields,
});

async function relay(pieces: string[]): Promise<{ text: string; events: Array<{ name: string; data: any }>; ends: StreamEnd[] }> {
  const ends: StreamEnd[] = [];
  let text = '';
  for await (const chunk of Readable.from(pieces.map((piece) => Buffer.from(piece))).pipe(stampedEventStream(base, (end) => ends.push(end))))
    text += chunk.toString();
  const events = [...text.matchAll(/event: (.+)\ndata: (.+)\n\n/g)].map((match) => ({ name: match[1]!, data: JSON.parse(match[2]!) }));
  return { text, events, ends };
}

const provider = [
  event('response.created', { response: providerResponse('in_progress') }, 0),
  event('response.in_progress', { response: providerResponse('in_progress') }, 1),
  event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi' }, 2),
  event('response.completed', { response: providerResponse('completed', { output_text: 'Hi' }) }, 3),
];

describe('the Responses events relayed with the gateway stamp', () => {
  it("puts the gateway's id, time and previous id on every response, and passes the deltas as they came", async () => {
    const { text, events, ends } = await relay(provider);
    expect(events.map((each) => each.name)).toEqual(['response.created', 'response.in_progress', 'response.output_text.delta', 'response.completed']);
    for (const each of [events[0]!, events[1]!, events[3]!]) {
      expect(each.data.response).toMatchObject({
        id: 'resp_gateway',
        created_at: 1700000000,
        previous_response_id: 'resp_gateway_previous',
        background: false,
      });
    }
    expect(text).toContain(provider[2]);
    expect(ends).toHaveLength(1);
    expect(ends[0]!.providerId).toBe('resp_provider_1');
    expect(ends[0]!.response).toMatchObject({ id: 'resp_gateway', status: 'completed', output_text: 'Hi' });
  });

  it('reads events cut at any byte', async () => {
    const whole = provider.join('');
    for (const size of [1, 7, 64]) {
      const pieces: string[] = [];
      for (let at = 0; at < whole.length; at += size) pieces.push(whole.slice(at, at + size));
      const { events, ends } = await relay(pieces);
      expect(events.map((each) => each.name).at(-1)).toBe('response.completed');
      expect(ends[0]!.response!.id).toBe('resp_gateway');
    }
  });

  it('ends a stream the core closed with a chat error event as OpenAI ends a failed one', async () => {
    const broken = [
      provider[0]!,
      provider[2]!,
      `data: ${JSON.stringify({ error: { message: 'The openai stream broke off.', type: 'provider_error', code: 'provider_stream_error', param: null } })}\n\n`,
      'data: [DONE]\n\n',
    ];
    const { events, text, ends } = await relay(broken);
    expect(events.map((each) => each.name)).toEqual(['response.created', 'response.output_text.delta', 'error', 'response.failed']);
    expect(events[2]!.data).toMatchObject({ code: 'provider_stream_error', message: 'The openai stream broke off.', sequence_number: 2 });
    expect(events[3]!.data.response).toMatchObject({ id: 'resp_gateway', status: 'failed', error: { code: 'provider_stream_error' } });
    expect(text).not.toContain('[DONE]');
    expect(ends.map((end) => end.response!.status)).toEqual(['failed']);
  });

  it('says the response failed when the stream ends before it said how', async () => {
    const { events, ends } = await relay(provider.slice(0, 3));
    expect(events.map((each) => each.name).slice(-2)).toEqual(['error', 'response.failed']);
    expect(ends).toHaveLength(1);
    expect(ends[0]!.response).toMatchObject({ status: 'failed', id: 'resp_gateway' });
  });

  it('reports a stream torn down before its end as failed, once', async () => {
    const ends: StreamEnd[] = [];
    const stream = stampedEventStream(base, (end) => ends.push(end));
    stream.write(Buffer.from(provider[0]!));
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    expect(ends).toHaveLength(1);
    expect((ends[0]!.response as ResponseObject).status).toBe('failed');
  });
});

describe('a provider stream that ends with an error event and nothing after it', () => {
  it('ends with response.failed carrying that error, not a second error event', async () => {
    const cut = [provider[0]!, event('error', { code: 'provider_stream_error', message: 'openai closed its stream', param: null }, 1)];
    const { events, ends } = await relay(cut);
    expect(events.map((each) => each.name)).toEqual(['response.created', 'error', 'response.failed']);
    expect(events[2]!.data).toMatchObject({ sequence_number: 2, response: { id: 'resp_gateway', status: 'failed', error: { code: 'provider_stream_error' } } });
    expect(ends[0]!.response!.error).toEqual({ code: 'provider_stream_error', message: 'openai closed its stream' });
  });
});
