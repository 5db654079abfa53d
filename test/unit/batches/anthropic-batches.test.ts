/**
 * Message Batches results back to OpenAI's batch lines, through the live adapter's response mapping:
 * on the repository's own Message sample, and replayed on the recorded Messages answer when the
 * recordings are there.
 */
import { describe, expect, it } from 'vitest';
import { anthropicResultLine } from '../../../lib/batches/anthropic-batches';
import { anthropicToolUseMessage } from '../../fixtures/providers/anthropic';
import { readRecordingJson, recordingsPresent } from '../../support/recordings';

const entry = { custom_id: 'order question', mapping: { provider: 'anthropic', strictApiCompliance: true } };
const line = (result: Record<string, unknown>) => {
  const { ok, text } = anthropicResultLine(entry, result);
  return { ok, line: JSON.parse(text) };
};

describe('Message Batches results as OpenAI batch lines', () => {
  /** A succeeded Message becomes a chat completion carrying its tool call, under the client's custom_id. */
  function becomesChatCompletion(answer: ReturnType<typeof anthropicToolUseMessage>) {
    const { ok, line: written } = line({ type: 'succeeded', message: answer });
    expect(ok).toBe(true);
    expect(written).toMatchObject({ custom_id: 'order question', error: null, response: { status_code: 200, request_id: answer.id } });
    const choice = written.response.body.choices[0];
    const toolUse = answer.content.find((block) => block.type === 'tool_use') as { id: string; name: string; input: unknown };
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls[0]).toMatchObject({ id: toolUse.id, type: 'function', function: { name: toolUse.name } });
    expect(JSON.parse(choice.message.tool_calls[0].function.arguments)).toEqual(toolUse.input);
    expect(written.response.body.usage.completion_tokens).toBe(answer.usage.output_tokens);
  }

  it('a succeeded message becomes a chat completion with its tool call (samples)', () => becomesChatCompletion(anthropicToolUseMessage()));

  it.skipIf(!recordingsPresent)('a succeeded message becomes a chat completion with its tool call (recorded transcripts)', () =>
    becomesChatCompletion(readRecordingJson<{ response: any }>('anthropic_messages_nonstream_tool_use_recording.json').response),
  );

  it('an errored request keeps its status and Anthropic’s error; an expired one is batch_expired', () => {
    const errored = line({ type: 'errored', error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    expect(errored).toMatchObject({ ok: false, line: { response: { status_code: 529 }, error: { code: 'overloaded_error', message: 'Overloaded' } } });
    expect(line({ type: 'expired' })).toMatchObject({ ok: false, line: { response: null, error: { code: 'batch_expired' } } });
  });
});
