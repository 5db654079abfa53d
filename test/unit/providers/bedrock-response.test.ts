import { describe, expect, it } from 'vitest';
import { readBedrockError } from '../../../lib/providers/bedrock/errors';
import { mapStopReason } from '../../../lib/providers/bedrock/finish-reason';
import { readConverseResponse } from '../../../lib/providers/bedrock/response';
import { readRecordingJson, recordingsPresent } from '../../support/recordings';

const model = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const read = (response: unknown, context: Partial<Parameters<typeof readConverseResponse>[1]> = {}) => {
  const result = readConverseResponse(Buffer.from(JSON.stringify(response)), { model, strict: true, ...context });
  return { completion: JSON.parse(result.body), usage: result.usage };
};

/**
 * Recorded ConverseStream events folded into the Converse (non-stream) response Bedrock returns for the
 * same turn: same blocks, stop reason, usage and metrics. No non-stream Bedrock recording is public, and
 * the two APIs carry the same blocks. Read inside a test, so nothing is read while tests are collected.
 */
function recordedAsConverse(name: string) {
  const events = readRecordingJson<Array<Record<string, any>>>(name);
  const blocks: any[] = [];
  let stopReason = '';
  let usage: unknown;
  let metrics: unknown;
  const inputs: string[] = [];
  for (const event of events) {
    if (event.contentBlockStart?.start?.toolUse) blocks[event.contentBlockStart.contentBlockIndex] = { toolUse: { ...event.contentBlockStart.start.toolUse } };
    if (event.contentBlockDelta) {
      const { contentBlockIndex: index, delta } = event.contentBlockDelta;
      if (delta.text !== undefined) blocks[index] = { text: (blocks[index]?.text ?? '') + delta.text };
      if (delta.toolUse) inputs[index] = (inputs[index] ?? '') + delta.toolUse.input;
      if (delta.reasoningContent) {
        const reasoningText = blocks[index]?.reasoningContent?.reasoningText ?? { text: '' };
        if (delta.reasoningContent.text !== undefined) reasoningText.text += delta.reasoningContent.text;
        if (delta.reasoningContent.signature !== undefined) reasoningText.signature = delta.reasoningContent.signature;
        blocks[index] = { reasoningContent: { reasoningText } };
      }
    }
    if (event.messageStop) stopReason = event.messageStop.stopReason;
    if (event.metadata) ({ usage, metrics } = event.metadata);
  }
  inputs.forEach((input, index) => (blocks[index].toolUse.input = JSON.parse(input)));
  return { output: { message: { role: 'assistant', content: blocks } }, stopReason, usage, metrics };
}

describe.skipIf(!recordingsPresent)('Converse response → chat.completion: recorded transcripts', () => {
  it('maps the tool-use turn field by field', () => {
    const { completion, usage } = read(recordedAsConverse('bedrock_converse_stream_tool_use_events.json'));
    const expectedUsage = { prompt_tokens: 364, completion_tokens: 71, total_tokens: 435 };
    expect(completion).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content:
              "Certainly! I can help you find out the weather in Berlin. To get this information, I'll use the weather tool available to me. Let me fetch that data for you.",
            tool_calls: [{ id: 'tooluse_pLGRAmK7TNKoZQ_rntVN_Q', type: 'function', function: { name: 'weather_tool', arguments: '{"location":"Berlin"}' } }],
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: expectedUsage,
    });
    expect(usage).toEqual(expectedUsage);
  });

  it('maps the thinking turn: reasoning with its signature beside a tool call, with strict API compliance off', () => {
    const response = recordedAsConverse('bedrock_converse_stream_thinking_tool_use_events.json');
    const recordedReasoning = response.output.message.content[0].reasoningContent.reasoningText.text;
    expect(recordedReasoning).toMatch(/^The user is asking about the weather in Paris\..* function call\.$/s);
    const toolCall = { id: 'tooluse_1gPhO4A1RNWgzKbt1PXWLg', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } };
    expect(read(response).completion.choices[0]).toMatchObject({
      message: { role: 'assistant', content: null, tool_calls: [toolCall] },
      finish_reason: 'tool_calls',
    });
    expect(read(response).completion.choices[0].message.content_blocks).toBeUndefined();
    expect(read(response, { strict: false }).completion.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [toolCall],
      content_blocks: [{ type: 'thinking', thinking: recordedReasoning, signature: '...' }],
    });
    expect(read(response).usage).toEqual({ prompt_tokens: 412, completion_tokens: 104, total_tokens: 516 });
  });
});

describe('Converse response → chat.completion', () => {
  it('gives content null for a tool-only answer and counts cached prompt tokens', () => {
    const { completion } = read({
      output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'f', input: { a: [1, 2] } } }] } },
      stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 1215, cacheReadInputTokens: 1000, cacheWriteInputTokens: 200 },
    });
    expect(completion.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'tooluse_1', type: 'function', function: { name: 'f', arguments: '{"a":[1,2]}' } }],
    });
    expect(completion.usage).toEqual({
      prompt_tokens: 1210,
      completion_tokens: 5,
      total_tokens: 1215,
      prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 200 },
    });
  });

  it('returns reasoning as content_blocks only with strict API compliance off', () => {
    const response = {
      output: {
        message: {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'Let me think.', signature: 'sig' } } },
            { reasoningContent: { redactedContent: 'AAEC' } },
            { text: 'Answer.' },
          ],
        },
      },
      stopReason: 'end_turn',
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    };
    expect(read(response).completion.choices[0].message).toEqual({ role: 'assistant', content: 'Answer.' });
    expect(read(response, { strict: false }).completion.choices[0].message).toEqual({
      role: 'assistant',
      content: 'Answer.',
      content_blocks: [
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig' },
        { type: 'redacted_thinking', data: 'AAEC' },
        { type: 'text', text: 'Answer.' },
      ],
    });
  });

  it('returns the forced response_format tool input as the content', () => {
    const { completion } = read(
      {
        output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 't', name: 'json_response', input: { answer: 42 } } }] } },
        stopReason: 'tool_use',
      },
      { responseTool: 'json_response' },
    );
    expect(completion.choices[0]).toMatchObject({ message: { role: 'assistant', content: '{"answer":42}' }, finish_reason: 'stop' });
    expect(completion.choices[0].message.tool_calls).toBeUndefined();
  });

  it('maps every stop reason', () => {
    expect(
      Object.fromEntries(
        [
          'end_turn',
          'stop_sequence',
          'max_tokens',
          'model_context_window_exceeded',
          'tool_use',
          'guardrail_intervened',
          'content_filtered',
          'malformed_model_output',
          'malformed_tool_use',
          'something_new',
          undefined,
        ].map((reason) => [String(reason), mapStopReason(reason)]),
      ),
    ).toEqual({
      end_turn: 'stop',
      stop_sequence: 'stop',
      max_tokens: 'length',
      model_context_window_exceeded: 'length',
      tool_use: 'tool_calls',
      guardrail_intervened: 'content_filter',
      content_filtered: 'content_filter',
      malformed_model_output: 'stop',
      malformed_tool_use: 'stop',
      something_new: 'stop',
      undefined: 'stop',
    });
  });

  it('answers 502 for a body that is not a Converse response', () => {
    expect(() => readConverseResponse(Buffer.from('<html>'), { model, strict: true })).toThrow(
      expect.objectContaining({ status: 502, provider: 'bedrock', code: 'provider_response_unreadable' }),
    );
  });
});

describe('Bedrock error responses', () => {
  it('keeps the status and message, and names the exception from x-amzn-ErrorType', () => {
    const error = readBedrockError(
      400,
      Buffer.from('{"message":"The model returned the following errors: messages: roles must alternate between \\"user\\" and \\"assistant\\""}'),
      { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
    );
    expect(error.status).toBe(400);
    expect(error.toBody()).toEqual({
      error: {
        message: 'The model returned the following errors: messages: roles must alternate between "user" and "assistant"',
        type: 'invalid_request_error',
        param: null,
        code: 'ValidationException',
        provider: 'bedrock',
      },
    });
  });

  it('reads the exception name from the body when the header is absent, and falls back on the text', () => {
    expect(
      readBedrockError(429, Buffer.from('{"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate exceeded"}'), {}).toBody().error,
    ).toMatchObject({ type: 'rate_limit_error', code: 'ThrottlingException', message: 'Rate exceeded' });
    expect(readBedrockError(403, Buffer.from('{"Message":"User is not authorized"}'), {}).toBody().error).toMatchObject({
      type: 'permission_error',
      code: null,
      message: 'User is not authorized',
    });
    expect(readBedrockError(503, Buffer.from('Service Unavailable'), {}).toBody().error).toMatchObject({
      type: 'server_error',
      message: 'Service Unavailable',
      provider: 'bedrock',
    });
    expect(
      readBedrockError(424, Buffer.from('{"message":"Model failed","originalStatusCode":500}'), { 'x-amzn-errortype': 'ModelErrorException' }).status,
    ).toBe(424);
  });
});
