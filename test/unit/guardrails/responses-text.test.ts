/*
 * The text guardrails read in a Responses exchange, and where a mutator's text goes back: the last
 * user message of `input` on the request side, the text of the answer's messages on the answer side.
 */
import { describe, expect, it } from 'vitest';
import { eventBody } from '../../../lib/guardrails/checks/network';
import { answerText, requestText, withAnswerText, withRequestText } from '../../../lib/guardrails/hook-text';
import { checkInput, run } from './check-input';

const request = (input: unknown) => ({ model: 'gpt-4.1-mini', instructions: 'Be brief.', input });
const image = { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' };

describe('request text of a Responses request', () => {
  it('is a string input itself, and a rewrite replaces it', () => {
    const body = request('my email is ann@example.com');
    expect(requestText('responses', body)).toBe('my email is ann@example.com');
    expect(withRequestText('responses', body, 'my email is [EMAIL]')).toEqual({ ...body, input: 'my email is [EMAIL]' });
    // The request the runner was given is never changed in place.
    expect(body.input).toBe('my email is ann@example.com');
  });

  it('is the last user message of an item list, however the message is written', () => {
    const items = [
      { role: 'developer', content: 'Answer in French.' },
      { type: 'message', role: 'user', content: 'first question' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'first answer', annotations: [] }] },
      { role: 'user', content: [{ type: 'input_text', text: 'second' }, image, { type: 'input_text', text: 'question' }] },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"role":"user"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'a tool result' },
    ];
    // Text parts join with a newline, as the chat path joins a message's parts; the image has no text.
    expect(requestText('responses', request(items))).toBe('second\nquestion');
    expect(requestText('responses', request(items.slice(0, 3)))).toBe('first question');
  });

  it('writes a rewrite into the first text part of that message, leaving its other parts and the other items', () => {
    const items = [
      { type: 'message', role: 'user', content: 'earlier' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'one' }, image, { type: 'input_text', text: 'two' }] },
      { type: 'function_call_output', call_id: 'call_1', output: 'x' },
    ];
    const body = request(items);
    const rewritten = withRequestText('responses', body, 'PREFIX one\ntwo');
    expect(rewritten).toEqual({
      ...body,
      input: [items[0], { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'PREFIX one\ntwo' }, image] }, items[2]],
    });
    expect(requestText('responses', rewritten!)).toBe('PREFIX one\ntwo');
    expect(items[1]!.content).toHaveLength(3);
  });

  it('writes a string content whole, and gives a message with only an image a text part first', () => {
    const stringContent = request([{ role: 'user', content: 'hi' }]);
    expect(withRequestText('responses', stringContent, 'hello')).toEqual({ ...stringContent, input: [{ role: 'user', content: 'hello' }] });
    const imageOnly = request([{ role: 'user', content: [image] }]);
    expect(requestText('responses', imageOnly)).toBe('');
    expect(withRequestText('responses', imageOnly, 'Describe:')).toEqual({
      ...imageOnly,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Describe:' }, image] }],
    });
  });

  it('is empty without a user message, and a rewrite then has nowhere to go', () => {
    for (const input of [[], [{ role: 'developer', content: 'rules' }], [{ type: 'function_call_output', call_id: 'c', output: 'x' }], undefined]) {
      const body = request(input);
      expect(requestText('responses', body)).toBe('');
      expect(withRequestText('responses', body, 'anything')).toBeUndefined();
    }
  });
});

const answer = (output: unknown[], extra: Record<string, unknown> = {}) => ({
  id: 'resp_1',
  object: 'response',
  status: 'completed',
  output,
  output_text: 'stale',
  usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8 },
  ...extra,
});
const text = (value: string, extra: Record<string, unknown> = {}) => ({ type: 'output_text', text: value, annotations: [], ...extra });
const message = (id: string, content: unknown[]) => ({ id, type: 'message', status: 'completed', role: 'assistant', content });
const reasoning = { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking about ann@example.com' }] };
const call = { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'f', arguments: '{"email":"ann@example.com"}' };

describe('answer text of a response', () => {
  it("is what output_text holds: the messages' output_text parts, joined", () => {
    const response = answer([reasoning, message('msg_1', [text('Hello, '), { type: 'refusal', refusal: 'no' }, text('Ann.')]), call]);
    expect(answerText('responses', response)).toBe('Hello, Ann.');
    expect(answerText('responses', answer([call]))).toBe('');
    expect(answerText('responses', {})).toBe('');
  });

  it('writes a rewrite into the first output_text part, drops the other text parts, and updates output_text', () => {
    const logprobs = [{ token: 'Hello', logprob: -0.1, bytes: [72], top_logprobs: [] }];
    const first = message('msg_1', [text('Mail ', { logprobs }), text('ann@example.com', { annotations: [{ type: 'url_citation' }] })]);
    const second = message('msg_2', [text(' again')]);
    const refusing = message('msg_3', [text('x'), { type: 'refusal', refusal: 'no' }]);
    const response = answer([reasoning, first, call, second, refusing]);
    const rewritten = withAnswerText('responses', response, 'Mail [EMAIL] again x');
    expect(rewritten).toEqual({
      ...response,
      // The token log probabilities spelled the old text; another message left without text goes.
      output: [
        reasoning,
        { ...first, content: [text('Mail [EMAIL] again x', { logprobs: [] })] },
        call,
        { ...refusing, content: [{ type: 'refusal', refusal: 'no' }] },
      ],
      output_text: 'Mail [EMAIL] again x',
    });
    expect(answerText('responses', rewritten!)).toBe('Mail [EMAIL] again x');
    expect(first.content).toHaveLength(2);
  });

  it('gives a message without text a text part, and has nowhere to write without a message', () => {
    const refusing = message('msg_1', [{ type: 'refusal', refusal: 'no' }]);
    expect(withAnswerText('responses', answer([refusing]), 'Note: ')).toEqual(
      answer([{ ...refusing, content: [text('Note: '), { type: 'refusal', refusal: 'no' }] }], { output_text: 'Note: ' }),
    );
    // The text stays where the first text part was.
    const after = message('msg_2', [{ type: 'refusal', refusal: 'no' }, text('a'), text('b')]);
    expect(withAnswerText('responses', answer([after]), 'ab!')).toEqual(
      answer([{ ...after, content: [{ type: 'refusal', refusal: 'no' }, text('ab!')] }], { output_text: 'ab!' }),
    );
    expect(withAnswerText('responses', answer([call]), 'anything')).toBeUndefined();
    expect(withAnswerText('responses', {}, 'anything')).toBeUndefined();
  });
});

describe('checks on a Responses request', () => {
  const input = (body: Record<string, unknown>) => checkInput('hi', { operation: 'responses', request: body });

  it('names its request type responses, or createModelResponse as the peer gateway does', async () => {
    const body = request('hi');
    for (const [parameters, verdict] of [
      [{ allowedTypes: ['responses'] }, true],
      [{ allowedTypes: ['createModelResponse'] }, true],
      [{ allowedTypes: ['chat', 'chatComplete'] }, false],
      [{ blockedTypes: ['createModelResponse'] }, false],
    ] as const) {
      const result = await run('default.allowedRequestTypes', parameters, input({ ...body, stream: true }));
      expect([result.error, result.verdict]).toEqual([undefined, verdict]);
    }
  });

  it('names it createModelResponse to a webhook or log endpoint, as the peer gateway does', () => {
    expect(eventBody(input(request('hi')))).toMatchObject({ eventType: 'beforeRequestHook', requestType: 'createModelResponse', request: { text: 'hi' } });
  });

  it("reads the flat function tools and built-in tools of a Responses request's tool list", async () => {
    const body = { ...request('hi'), tools: [{ type: 'function', name: 'send_mail', parameters: {} }, { type: 'web_search' }] };
    const blockedName = await run('default.requestParametersCheck', { tools: { blockedFunctionNames: ['send_mail'] } }, input(body));
    expect([blockedName.error, blockedName.verdict]).toEqual([undefined, false]);
    const blockedType = await run('default.requestParametersCheck', { tools: { blockedTypes: ['web_search'] } }, input(body));
    expect([blockedType.error, blockedType.verdict]).toEqual([undefined, false]);
    const allowed = await run('default.requestParametersCheck', { tools: { allowedFunctionNames: ['send_mail'] } }, input(body));
    expect([allowed.error, allowed.verdict]).toEqual([undefined, true]);
  });
});
