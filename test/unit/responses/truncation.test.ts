import { describe, expect, it } from 'vitest';
import { dropOldest, estimateTokens, fitToWindow, inputBudget, isContextLengthError, startAtUserTurn, truncateToFit } from '../../../lib/responses/truncation';
import type { ConversationItem } from '../../../lib/providers/responses-format/types';

const user = (text: string): ConversationItem => ({ type: 'message', role: 'user', content: text });
const assistant = (text: string): ConversationItem => ({
  type: 'message',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
});
const system = (text: string): ConversationItem => ({ type: 'message', role: 'system', content: text });
const developer = (text: string): ConversationItem => ({ type: 'message', role: 'developer', content: text });
const call = (callId: string, args = '{}'): ConversationItem => ({ type: 'function_call', call_id: callId, name: 'lookup', arguments: args });
const output = (callId: string, text = 'ok'): ConversationItem => ({ type: 'function_call_output', call_id: callId, output: text });
const reasoning = (id: string): ConversationItem => ({ type: 'reasoning', id, summary: [], encrypted_content: 'x'.repeat(4000) });

/** Text long enough that the item dominates its estimate (about 250 tokens). */
const long = (label: string) => `${label} ${'lorem ipsum '.repeat(83)}`;

const tokensOf = (item: ConversationItem) => estimateTokens([item]);
const sum = (items: ConversationItem[]) => items.reduce((total, item) => total + tokensOf(item), 0);

/** The items of `kept` must appear in `all` in the same order. */
function expectSubsequence(kept: ConversationItem[], all: ConversationItem[]) {
  let at = 0;
  for (const item of kept) {
    at = all.indexOf(item, at);
    expect(at).toBeGreaterThanOrEqual(0);
    at++;
  }
}

describe('estimateTokens', () => {
  it('counts each item’s JSON at four bytes a token, rounded up, plus a few tokens of overhead', () => {
    const item = user('Hello there');
    const bytes = Buffer.byteLength(JSON.stringify(item));
    expect(estimateTokens([item])).toBe(Math.ceil(bytes / 4) + 4);
    expect(estimateTokens([item, item])).toBe(2 * (Math.ceil(bytes / 4) + 4));
    expect(estimateTokens([])).toBe(0);
  });

  it('counts bytes, so text outside ASCII weighs more than its length', () => {
    expect(estimateTokens([user('é'.repeat(400))])).toBeGreaterThan(estimateTokens([user('e'.repeat(400))]) + 90);
  });

  it('adds the extra text (instructions, tools), and nothing for reasoning, which the chat request does not carry', () => {
    expect(estimateTokens([], 'x'.repeat(401))).toBe(101);
    expect(estimateTokens([user('Hi')], 'abcd')).toBe(estimateTokens([user('Hi')]) + 1);
    expect(estimateTokens([reasoning('rs_1')])).toBe(0);
  });
});

describe('inputBudget', () => {
  it('leaves max_output_tokens for the answer when the request sets it', () => {
    expect(inputBudget(128_000, 1_000)).toBe(127_000);
    expect(inputBudget(16_385, 20_000)).toBe(0);
  });

  it('otherwise reserves 4,096 tokens, at most a quarter of the window', () => {
    expect(inputBudget(128_000)).toBe(123_904);
    expect(inputBudget(128_000, null)).toBe(123_904);
    expect(inputBudget(128_000, 0)).toBe(123_904);
    expect(inputBudget(8_000)).toBe(6_000);
  });
});

describe('truncateToFit', () => {
  it('returns the conversation as it is when it fits', () => {
    const items = [user('Hi'), assistant('Hello'), user('How are you?')];
    expect(truncateToFit(items, estimateTokens(items))).toEqual({ items, dropped: 0 });
  });

  it('drops the oldest items first, and only as many as it takes', () => {
    const items = [user(long('u1')), assistant(long('a1')), user(long('u2')), assistant(long('a2')), user('u3')];
    const budget = sum(items) - tokensOf(items[0]) - 1;
    const result = truncateToFit(items, budget);
    expect(result).toEqual({ items: items.slice(2), dropped: 2 });
    expect(estimateTokens(result.items)).toBeLessThanOrEqual(budget);

    expect(truncateToFit(items, sum(items) - 1)).toEqual({ items: items.slice(1), dropped: 1 });
  });

  it('drops a function call together with its output, wherever the output stands', () => {
    const items = [user(long('u1')), call('call_a', long('args')), assistant(long('a1')), output('call_a', long('result')), user('u2')];
    const result = truncateToFit(items, sum(items) - tokensOf(items[0]) - 1);
    expect(result).toEqual({ items: [items[2], items[4]], dropped: 3 });
  });

  it('keeps parallel calls apart: each call goes with its own outputs', () => {
    const items = [user('u1'), call('call_a', long('a')), call('call_b', long('b')), output('call_a'), output('call_b'), user('u2')];
    const result = truncateToFit(items, sum(items) - tokensOf(items[0]) - tokensOf(items[1]));
    expect(result).toEqual({ items: [items[2], items[4], items[5]], dropped: 3 });
  });

  it('never drops the newest user turn nor what follows it, even a call made before it', () => {
    const items = [user(long('u1')), call('call_early'), assistant(long('a1')), user(long('u2')), output('call_early'), call('call_x'), output('call_x')];
    const result = truncateToFit(items, 0);
    expect(result).toEqual({ items: [items[1], items[3], items[4], items[5], items[6]], dropped: 2 });
  });

  it('reads a message without a type as a message, as the translation does', () => {
    const items = [
      { role: 'user', content: long('u1') },
      { role: 'assistant', content: long('a1') },
      { role: 'user', content: 'u2' },
      { role: 'assistant', content: 'a2' },
    ] as ConversationItem[];
    expect(truncateToFit(items, 0)).toEqual({ items: items.slice(2), dropped: 2 });
    const steered = [{ role: 'developer', content: 'Be brief.' }, ...items] as ConversationItem[];
    expect(truncateToFit(steered, 0)).toEqual({ items: [steered[0], ...items.slice(2)], dropped: 2 });
  });

  it('without a user message, keeps the last item and its unit', () => {
    const items = [assistant(long('a1')), call('call_a'), output('call_a')];
    expect(truncateToFit(items, 0)).toEqual({ items: items.slice(1), dropped: 1 });
  });

  it('keeps system and developer messages, which steer the whole conversation', () => {
    const items = [developer('Be brief.'), user(long('u1')), assistant(long('a1')), system('Answer in French.'), user('u2')];
    expect(truncateToFit(items, 0)).toEqual({ items: [items[0], items[3], items[4]], dropped: 2 });
  });

  it('drops reasoning with the assistant item it led to, never before it', () => {
    const items = [user(long('u1')), reasoning('rs_1'), assistant(long('a1')), reasoning('rs_2'), call('call_a'), output('call_a'), user('u2')];
    // Room for all but u1: the reasoning stays with its answer.
    expect(truncateToFit(items, sum(items) - tokensOf(items[0]))).toEqual({ items: items.slice(1), dropped: 1 });
    // One more unit has to go: rs_1 goes with a1, rs_2 stays with its call.
    expect(truncateToFit(items, sum(items) - tokensOf(items[0]) - 1)).toEqual({ items: items.slice(3), dropped: 3 });
  });

  it('returns the kept items when even they do not fit', () => {
    const items = [user(long('u1')), assistant(long('a1')), user(long('u2'))];
    expect(truncateToFit(items, 10)).toEqual({ items: [items[2]], dropped: 2 });
    expect(truncateToFit([], 0)).toEqual({ items: [], dropped: 0 });
  });

  it('keeps whole units, the newest turn, and the order, for any conversation and budget', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 300; round++) {
      const items: ConversationItem[] = [];
      const open: string[] = [];
      const length = 1 + Math.floor(random() * 14);
      for (let i = 0; i < length; i++) {
        const pick = random();
        const text = 'x'.repeat(Math.floor(random() * 800));
        if (pick < 0.3) items.push(user(text));
        else if (pick < 0.5) items.push(assistant(text));
        else if (pick < 0.65) {
          const id = `call_${round}_${i}`;
          open.push(id);
          items.push(call(id, text));
        } else if (pick < 0.8 && open.length > 0) items.push(output(open.shift()!, text));
        else if (pick < 0.9) items.push(reasoning(`rs_${i}`));
        else items.push(developer(text));
      }
      const budget = Math.floor(random() * estimateTokens(items) * 1.2);
      const { items: kept, dropped } = truncateToFit(items, budget);

      expect(kept.length + dropped).toBe(items.length);
      expectSubsequence(kept, items);
      const lastUser = items.findLastIndex((item) => item.type === 'message' && item.role === 'user');
      const tail = lastUser >= 0 ? items.slice(lastUser) : items.slice(-1);
      for (const item of tail) expect(kept).toContain(item);
      for (const item of items) if (item.type === 'message' && item.role === 'developer') expect(kept).toContain(item);
      const calls = new Set(kept.filter((item) => item.type === 'function_call').map((item) => (item as { call_id: string }).call_id));
      const allCalls = new Set(items.filter((item) => item.type === 'function_call').map((item) => (item as { call_id: string }).call_id));
      for (const item of kept) {
        const callId = (item as { call_id?: string }).call_id;
        if (item.type === 'function_call_output' && allCalls.has(callId!)) expect(calls.has(callId!)).toBe(true);
      }
      for (const item of items) {
        if (item.type === 'function_call_output' && !kept.includes(item)) expect(calls.has((item as { call_id: string }).call_id)).toBe(false);
      }
      // Within budget, unless only what may not be dropped is left.
      if (estimateTokens(kept) > budget) expect(dropOldest(kept)).toBeUndefined();
    }
  });
});

describe('dropOldest', () => {
  it('drops one unit at a time, oldest first, and then says nothing more can go', () => {
    const items = [system('Be brief.'), user('u1'), call('call_a'), assistant('a1'), output('call_a'), user('u2'), assistant('a2')];
    const first = dropOldest(items);
    expect(first).toEqual([items[0], items[2], items[3], items[4], items[5], items[6]]);
    const second = dropOldest(first!);
    expect(second).toEqual([items[0], items[3], items[5], items[6]]);
    const third = dropOldest(second!);
    expect(third).toEqual([items[0], items[5], items[6]]);
    expect(dropOldest(third!)).toBeUndefined();
  });

  it('drops reasoning that leads nowhere along with the next unit, so the retry differs', () => {
    const items = [reasoning('rs_1'), user('u1'), assistant('a1'), user('u2')];
    expect(dropOldest(items)).toEqual([items[2], items[3]]);
    expect(dropOldest([reasoning('rs_1'), user('u2')])).toBeUndefined();
    expect(dropOldest([])).toBeUndefined();
  });
});

describe('isContextLengthError', () => {
  const matches: Array<[string, { status: number; code?: string | null; message: string }]> = [
    [
      'OpenAI chat completions',
      {
        status: 400,
        code: 'context_length_exceeded',
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
      },
    ],
    ['OpenAI, by its code alone', { status: 400, code: 'context_length_exceeded', message: 'Too long.' }],
    [
      'OpenAI Responses API',
      { status: 400, code: null, message: 'Your input exceeds the context window of this model. Please adjust your input and try again.' },
    ],
    ['a 413 with OpenAI’s wording', { status: 413, message: "This model's maximum context length is 8192 tokens." }],
    ['Anthropic', { status: 400, code: 'invalid_request_error', message: 'prompt is too long: 215034 tokens > 200000 maximum' }],
    [
      'Anthropic, input and max_tokens',
      {
        status: 400,
        code: 'invalid_request_error',
        message: 'input length and `max_tokens` exceed context limit: 190000 + 16000 > 200000, decrease input length or `max_tokens` and try again',
      },
    ],
    ['Gemini', { status: 400, code: 'INVALID_ARGUMENT', message: 'The input token count (1100000) exceeds the maximum number of tokens allowed (1048576).' }],
    ['Bedrock', { status: 400, code: 'ValidationException', message: 'Input is too long for requested model.' }],
    [
      'Claude on Bedrock',
      { status: 400, code: 'ValidationException', message: 'The model returned the following errors: prompt is too long: 201000 tokens > 200000 maximum' },
    ],
    [
      'Titan on Bedrock',
      { status: 400, code: 'ValidationException', message: 'Too many input tokens. Max input tokens: 8192, request input token count: 9100' },
    ],
    [
      'Cohere',
      {
        status: 400,
        message:
          'too many tokens: total number of tokens (prompt and prediction) cannot exceed 4081 - received 5120. Try using a shorter prompt or a smaller max_tokens value.',
      },
    ],
    ['Mistral', { status: 400, message: 'Prompt contains 40123 tokens and 0 draft tokens, too large for model with 32768 maximum context length' }],
    [
      'vLLM',
      {
        status: 400,
        code: '400',
        message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8488 in the messages, 512 in the completion).",
      },
    ],
    ['llama.cpp', { status: 400, code: '400', message: 'request (4390 tokens) exceeds the available context size (4096 tokens), try increasing it' }],
    [
      'Text Generation Inference',
      {
        status: 422,
        message: 'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192. Given: 9000 `inputs` tokens and 512 `max_new_tokens`',
      },
    ],
  ];
  for (const [provider, error] of matches) {
    it(`recognises ${provider}`, () => expect(isContextLengthError(error)).toBe(true));
  }

  const others: Array<[string, { status: number; code?: string | null; message: string }]> = [
    [
      'a rate limit on tokens',
      { status: 429, code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Requested 50000.' },
    ],
    ['a rate limit that says too many tokens', { status: 429, message: 'too many tokens per minute' }],
    ['the context code on a server error', { status: 500, code: 'context_length_exceeded', message: 'Context size has been exceeded.' }],
    ['a bad parameter', { status: 400, code: 'invalid_value', message: "Invalid value for 'temperature': must be between 0 and 2." }],
    [
      'Anthropic’s output cap',
      {
        status: 400,
        code: 'invalid_request_error',
        message: 'max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-20250514',
      },
    ],
    ['Bedrock’s output cap', { status: 400, code: 'ValidationException', message: 'The maximum tokens you requested exceeds the model limit of 4096.' }],
    ['Gemini’s invalid argument', { status: 400, code: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' }],
    ['a bad key', { status: 401, code: 'invalid_api_key', message: 'Incorrect API key provided.' }],
  ];
  for (const [what, error] of others) {
    it(`does not take ${what} for one`, () => expect(isContextLengthError(error)).toBe(false));
  }
});

describe('the conversation a truncating request sends', () => {
  const user = (text: string) => ({ type: 'message' as const, role: 'user' as const, content: text });
  const assistant = (text: string) => ({ type: 'message' as const, role: 'assistant' as const, content: text });

  it('opens with a user turn: the answer to a dropped question goes with it, system messages stay', () => {
    const system = { type: 'message' as const, role: 'system' as const, content: 'rules' };
    expect(startAtUserTurn([system, assistant('old answer'), user('new question')])).toEqual([system, user('new question')]);
    expect(startAtUserTurn([user('q'), assistant('a')])).toEqual([user('q'), assistant('a')]);
  });

  it('fits a known model’s window before the call, and leaves a model it does not know to the provider', () => {
    const long = [user('word '.repeat(80_000)), assistant('ok'), user('and now?')];
    expect(fitToWindow({ model: 'gpt-3.5-turbo', truncation: 'auto' }, long)).toEqual([user('and now?')]);
    expect(fitToWindow({ model: 'gpt-3.5-turbo', truncation: 'disabled' }, long)).toBe(long);
    expect(fitToWindow({ model: 'a-model-nobody-knows', truncation: 'auto' }, long)).toBe(long);
  });
});
