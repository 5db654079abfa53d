/**
 * Responses event streams as the gateway writes them: chat chunks run through the translation
 * (events-from-chat.ts), with the response it ended with. What the cache's capture and replay
 * tests compare against.
 */
import type { ChatCompletionChunk, ChunkDelta, FinishReason } from '../../lib/providers/openai-format/types';
import { responsesEventStream } from '../../lib/providers/responses-format/events-from-chat';
import { baseResponse } from '../../lib/providers/responses-format/response-object';
import type { ResponseObject } from '../../lib/providers/responses-format/types';

export type ResponseEvent = { type: string; sequence_number: number; [field: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

const sse = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;

/** A chat chunk of the one choice, as SSE. */
export const chatChunk = (delta: ChunkDelta, finishReason: FinishReason | null = null): string =>
  sse({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  } satisfies ChatCompletionChunk);

export const chatUsage = sse({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});
export const chatError = sse({ error: { message: 'Overloaded', type: 'provider_error', param: null, code: 'overloaded_error' } });
export const chatDone = 'data: [DONE]\n\n';

/** A response object that is also plain JSON, as the cache stores and replays it. */
export type StoredResponse = ResponseObject & Record<string, unknown>;

/** The Responses events the gateway streams for these chat SSE pieces, and the response it ends with. */
export async function translated(chat: string[]): Promise<{ wire: string; final: StoredResponse }> {
  let final: ResponseObject | undefined;
  const stream = responsesEventStream(baseResponse({ model: 'm', input: 'hi' }, { id: 'resp_1', createdAt: 1700000000 }), (response) => {
    final = structuredClone(response);
  });
  const out: Buffer[] = [];
  stream.on('data', (data: Buffer) => out.push(Buffer.from(data)));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  for (const piece of chat) stream.write(piece);
  stream.end();
  await ended;
  return { wire: Buffer.concat(out).toString('utf8'), final: final as StoredResponse };
}

/** The events of SSE text written as `event: <type>\ndata: <json>\n\n`. */
export function responseEvents(wire: string): ResponseEvent[] {
  return wire
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const data = frame.split('\n').find((line) => line.startsWith('data: '))!;
      return JSON.parse(data.slice(6)) as ResponseEvent;
    });
}
