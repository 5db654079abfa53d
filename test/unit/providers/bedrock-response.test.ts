import { describe, expect, it } from 'vitest';
import { readBedrockError } from '../../../lib/providers/bedrock/errors';
import { mapStopReason } from '../../../lib/providers/bedrock/finish-reason';
import { readConverseResponse } from '../../../lib/providers/bedrock/response';
import { bedrockToolUseResponse, converseResponse, thinkingToolUseTurn } from '../../fixtures/providers/bedrock';
import { readRecordingJson, recordingsPresent } from '../../support/recordings';

const model = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const read = (response: unknown, context: Partial<Parameters<typeof readConverseResponse>[1]> = {}) => {
  const result = readConverseResponse(Buffer.from(JSON.stringify(response)), { model, strict: true, ...context });
  return { completion: JSON.parse(result.body), usage: result.usage };
};

/**
 * The recorded ConverseStream tool-use events folded into the Converse (non-stream) response Bedrock
 * returns for the same turn: same blocks, stop reason and usage.
 */
function recordedAsConverse() {
  const events = readRecordingJson<Array<Record<string, any>>>('bedrock_converse_stream_tool_use_events.json');
  const blocks: any[] = [];
  let stopReason = '';
  let usage: unknown;
  const inputs: string[] = [];
  for (const event of events) {
    if (event.contentBlockStart?.start?.toolUse) blocks[event.contentBlockStart.contentBlockIndex] = { toolUse: { ...event.contentBlockStart.start.toolUse } };
    if (event.contentBlockDelta) {
      const { contentBlockIndex: index, delta } = event.contentBlockDelta;
      if (delta.text !== undefined) blocks[index] = { text: (blocks[index]?.text ?? '') + delta.text };
      if (delta.toolUse) inputs[index] = (inputs[index] ?? '') + delta.toolUse.input;
    }
    if (event.messageStop) stopReason = event.messageStop.stopReason;
    if (event.metadata) usage = event.metadata.usage;
  }
  inputs.forEach((input, index) => (blocks[index].toolUse.input = JSON.parse(input)));
  return { output: { message: { role: 'assistant', content: blocks } }, stopReason, usage, metrics: { latencyMs: 2449 } };
}

type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

/**
 * A tool-use turn and the chat.completion it must become. The response is built when its test runs, so
 * no recording is read while the tests are collected.
 */
interface ToolUseTurn {
  response: () => unknown;
  content: string;
  toolCall: { id: string; name: string; arguments: string };
  usage: Usage;
}

const samples: ToolUseTurn = {
  response: () => bedrockToolUseResponse,
  content: 'Let me check on order A-1042 for you. One moment while I look up its shipping status.',
  toolCall: { id: 'tooluse_gw_sample_01', name: 'lookup_order', arguments: '{"order_id":"A-1042"}' },
  usage: { prompt_tokens: 287, completion_tokens: 58, total_tokens: 345 },
};

const recordings: ToolUseTurn = {
  response: recordedAsConverse,
  content:
    "Certainly! I can help you find out the weather in Berlin. To get this information, I'll use the weather tool available to me. Let me fetch that data for you.",
  toolCall: { id: 'tooluse_pLGRAmK7TNKoZQ_rntVN_Q', name: 'weather_tool', arguments: '{"location":"Berlin"}' },
  usage: { prompt_tokens: 364, completion_tokens: 71, total_tokens: 435 },
};

describe.each([
  ['samples', samples, false],
  ['recorded transcripts', recordings, !recordingsPresent],
] as const)('Converse response → chat.completion: %s', (_source, turn, skip) => {
  it.skipIf(skip)('maps the tool-use turn field by field', () => {
    const { completion, usage } = read(turn.response());
    const { id, name, arguments: args } = turn.toolCall;
    expect(completion).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: turn.content, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: turn.usage,
    });
    expect(usage).toEqual(turn.usage);
  });
});

describe('Converse response → chat.completion', () => {
  it('maps the thinking sample: reasoning with its signature beside a tool call, with strict API compliance off', () => {
    const response = converseResponse(thinkingToolUseTurn);
    const toolCall = { id: 'tooluse_gw_sample_02', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id":"A-1042"}' } };
    expect(read(response).completion.choices[0]).toMatchObject({
      message: { role: 'assistant', content: null, tool_calls: [toolCall] },
      finish_reason: 'tool_calls',
    });
    expect(read(response).completion.choices[0].message.content_blocks).toBeUndefined();
    expect(read(response, { strict: false }).completion.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [toolCall],
      content_blocks: [
        {
          type: 'thinking',
          thinking:
            'The customer wants to know when order A-1042 will ship. The lookup_order tool takes an order_id, and the id is given, so I can call it right away.',
          signature: 'Z3ctc2FtcGxlLXJlYXNvbmluZy1zaWduYXR1cmUtMDE=',
        },
      ],
    });
    expect(read(response).usage).toEqual({ prompt_tokens: 398, completion_tokens: 87, total_tokens: 485 });
  });

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
