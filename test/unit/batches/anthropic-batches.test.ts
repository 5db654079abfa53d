/**
 * Message Batches results back to OpenAI's batch lines, through the live adapter's response mapping:
 * on small answers written here, and replayed on the recorded Messages answer when the recordings are
 * there (read inside the test, so a clone without them skips it).
 */
import { describe, expect, it } from 'vitest';
import { anthropicResultLine } from '../../../lib/batches/anthropic-batches';
import { readRecordingJson, recordingsPresent } from '../../support/recordings';

const entry = { custom_id: 'order question', mapping: { provider: 'anthropic', strictApiCompliance: true } };
const line = (result: Record<string, unknown>) => {
  const { ok, text } = anthropicResultLine(entry, result);
  return { ok, line: JSON.parse(text) };
};

/** What the tests read of an Anthropic Message. */
interface Message {
  id: string;
  content: Array<{ type: string; id?: string; name?: string; input?: unknown }>;
  usage: { output_tokens: number };
}

describe('Message Batches results as OpenAI batch lines', () => {
  it('a succeeded message becomes a chat completion under the client’s custom_id', () => {
    const answer = {
      id: 'msg_b1',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [{ type: 'text', text: 'Done.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 6, output_tokens: 2 },
    };
    const { ok, line: written } = line({ type: 'succeeded', message: answer });
    expect(ok).toBe(true);
    expect(written).toMatchObject({ custom_id: 'order question', error: null, response: { status_code: 200, request_id: 'msg_b1' } });
    expect(written.response.body).toMatchObject({ object: 'chat.completion', usage: { prompt_tokens: 6, completion_tokens: 2, total_tokens: 8 } });
    expect(written.response.body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'Done.' } });
  });

  it.skipIf(!recordingsPresent)('a succeeded message becomes a chat completion with its tool call (recorded transcript)', () => {
    const answer = readRecordingJson<{ response: Message }>('anthropic_messages_nonstream_tool_use_recording.json').response;
    const { ok, line: written } = line({ type: 'succeeded', message: answer });
    expect(ok).toBe(true);
    expect(written).toMatchObject({ custom_id: 'order question', error: null, response: { status_code: 200, request_id: answer.id } });
    const choice = written.response.body.choices[0];
    const toolUse = answer.content.find((block) => block.type === 'tool_use')!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls[0]).toMatchObject({ id: toolUse.id, type: 'function', function: { name: toolUse.name } });
    expect(JSON.parse(choice.message.tool_calls[0].function.arguments)).toEqual(toolUse.input);
    expect(written.response.body.usage.completion_tokens).toBe(answer.usage.output_tokens);
  });

  it('an errored request keeps its status and Anthropic’s error; an expired one is batch_expired', () => {
    const errored = line({ type: 'errored', error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    expect(errored).toMatchObject({ ok: false, line: { response: { status_code: 529 }, error: { code: 'overloaded_error', message: 'Overloaded' } } });
    expect(line({ type: 'expired' })).toMatchObject({ ok: false, line: { response: null, error: { code: 'batch_expired' } } });
  });
});
