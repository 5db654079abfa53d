/**
 * What a translated Responses request costs the gateway beyond the same chat completion, in-process:
 * the work the responses route and the translation do that a chat request does not (reading the
 * request, its input items and response object, the chat body and its bytes, the response made from
 * the chat answer and its bytes, and the route's stamp on it), timed over many requests. The store
 * write after the answer is not in it: `npm run bench` measures the whole request, write included,
 * as the `responses` scenario beside `chat`.
 *
 * Run: npm run bench:responses
 */
import { responsesBody, stampedAnswer } from '../lib/responses/run-response';
import { inputItems } from '../lib/responses/input-items';
import { responseFromChat } from '../lib/providers/responses-format/from-chat';
import { checkResponsesRequest } from '../lib/providers/responses-format/request';
import { baseResponse } from '../lib/providers/responses-format/response-object';
import { toChatRequest } from '../lib/providers/responses-format/to-chat';
import type { ChatCompletion } from '../lib/providers/openai-format/types';
import type { ResponseObject } from '../lib/providers/responses-format/types';
import { CHAT_BODY } from './scenarios/requests';

const [system, user] = CHAT_BODY.messages;
const requestText = JSON.stringify({ model: CHAT_BODY.model, instructions: system!.content, input: user!.content });
// The fake upstream's answer to the bench's chat request, byte for byte in shape.
const answerText = JSON.stringify({
  id: 'chatcmpl-0123456789abcdef0123456789',
  object: 'chat.completion',
  created: 1764000000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: `echo: ${user!.content}`, refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: {
    prompt_tokens: 19,
    completion_tokens: 9,
    total_tokens: 28,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  },
});

/** One request's extra work; returns the bytes the client gets so that nothing is optimised away. */
function translateOnce(): number {
  const request = checkResponsesRequest(JSON.parse(requestText));
  const input = inputItems(request);
  const base = baseResponse(request, { id: 'resp_0123456789abcdefghijklmnop', createdAt: 1764000000 });
  const chatBytes = JSON.stringify(toChatRequest(responsesBody(request, request.input) as typeof request, []));
  const translated = JSON.stringify(responseFromChat(JSON.parse(answerText) as ChatCompletion, base));
  const { response } = stampedAnswer(JSON.parse(translated) as ResponseObject, base);
  return chatBytes.length + JSON.stringify(response).length + input.length;
}

let sink = 0;
for (let i = 0; i < 20_000; i++) sink += translateOnce();
const rounds = 5;
const perRequestUs: number[] = [];
for (let round = 0; round < rounds; round++) {
  const count = 50_000;
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) sink += translateOnce();
  const used = process.cpuUsage(cpu);
  perRequestUs.push((used.user + used.system) / count);
}
perRequestUs.sort((a, b) => a - b);
const median = perRequestUs[Math.floor(rounds / 2)]!;
// The bytes made are counted so that no step can be optimised away.
if (sink === 0) throw new Error('the translation made nothing');
console.log(`responses translation (non-streamed, beyond the chat completion): ${median.toFixed(1)} µs CPU per request (median of ${rounds} rounds)`);
