/**
 * The Responses events made from Anthropic's recorded streams, as the gateway makes them: the
 * recording through the Anthropic adapter's stream (to OpenAI's chat chunks) and then through the
 * Responses event stream. Read from the recordings beside the repository; skipped without them.
 */
import { describe, expect, it } from 'vitest';
import { baseResponse } from '../../../lib/providers/responses-format/response-object';
import { responsesEventStream } from '../../../lib/providers/responses-format/events-from-chat';
import type { ResponseObject } from '../../../lib/providers/responses-format/types';
import { replayAnthropicStream } from '../../support/fakes/anthropic';
import { readRecordingBytes, recordingsPresent } from '../../support/recordings';
import { parseSse } from '../../support/sse';

/** The Responses events of a recorded Anthropic stream, and the response the stream ended with. */
async function responsesEventsOf(recording: string): Promise<{ events: any[]; final: ResponseObject | undefined }> {
  const { text } = await replayAnthropicStream(readRecordingBytes(recording), { includeUsage: true, strict: false });
  let final: ResponseObject | undefined;
  const stream = responsesEventStream(baseResponse({ model: 'claude-sonnet-4-20250514', input: 'x' }, { id: 'resp_recorded', createdAt: 1 }), (response) => {
    final = response;
  });
  let out = '';
  stream.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  stream.end(text);
  await ended;
  return { events: parseSse(out).map((event) => JSON.parse(event.data)), final };
}

describe.skipIf(!recordingsPresent)('Responses events from recorded Anthropic streams', () => {
  it('a text block then a tool call: message item, then function_call item, completed with usage', async () => {
    const { events, final } = await responsesEventsOf('anthropic_stream_tool_use.sse');
    const types = events.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const added = events.filter((event) => event.type === 'response.output_item.added').map((event) => event.item.type);
    expect(added).toEqual(['message', 'function_call']);
    const call = final!.output.find((item) => item.type === 'function_call') as any;
    expect(call.name).toBe('get_weather');
    const argumentsDelta = events
      .filter((event) => event.type === 'response.function_call_arguments.delta')
      .map((event) => event.delta)
      .join('');
    expect(JSON.parse(argumentsDelta)).toEqual(JSON.parse(call.arguments));
    const text = events
      .filter((event) => event.type === 'response.output_text.delta')
      .map((event) => event.delta)
      .join('');
    expect(final!.output_text).toBe(text);
    expect(final!.usage?.output_tokens).toBeGreaterThan(0);
  });

  it('thinking, then text that ends in a refusal: a reasoning item first, and the response incomplete', async () => {
    const { events, final } = await responsesEventsOf('anthropic_stream_thinking_signature_refusal.SYNTHETIC.sse');
    const added = events.filter((event) => event.type === 'response.output_item.added').map((event) => event.item.type);
    expect(added[0]).toBe('reasoning');
    expect(events.some((event) => event.type === 'response.reasoning_summary_text.delta')).toBe(true);
    expect(events.at(-1).type).toBe('response.incomplete');
    expect(final).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' } });
  });
});
