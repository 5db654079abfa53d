import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { prepareCall } from '../../../lib/providers/prepare-call';
import { findProvider } from '../../../lib/providers/registry';
import type { PreparedCall, ProviderCall } from '../../../lib/providers/types';
import { rejectedGatewayError } from '../../support/gateway-error';

function responsesCall(provider: string, body: Record<string, unknown>, fields: Partial<ProviderCall> = {}): ProviderCall {
  return {
    operation: 'responses',
    body,
    stream: false,
    target: { provider: findProvider(provider)!, baseUrl: 'http://127.0.0.1:9/v1', settings: { api_key: 'k' } },
    forwardHeaders: {},
    requestHeaders: {},
    strictApiCompliance: true,
    ...fields,
  };
}

const sentBody = (prepared: PreparedCall) => JSON.parse(prepared.body.toString());

describe('a Responses call to a provider without the Responses API', () => {
  it('goes out as the chat completion its adapter speaks', async () => {
    const prepared = await prepareCall(responsesCall('groq', { model: 'llama', instructions: 'Be brief.', input: 'Hi', max_output_tokens: 50 }));
    expect(prepared.url.pathname).toBe('/v1/chat/completions');
    expect(sentBody(prepared)).toEqual({
      model: 'llama',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      max_completion_tokens: 50,
    });
  });

  it('answers a whole chat completion as a response object', async () => {
    const prepared = await prepareCall(responsesCall('groq', { model: 'llama', input: 'Hi' }));
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'llama-3',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    };
    const answer = prepared.readResponse(Buffer.from(JSON.stringify(completion)));
    expect(answer.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2 });
    expect(JSON.parse(answer.body.toString())).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'llama-3',
      output_text: 'Hello!',
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
    });
  });

  it('streams the chat stream as Responses events, with usage reported once', async () => {
    const prepared = await prepareCall(responsesCall('groq', { model: 'llama', input: 'Hi', stream: true }, { stream: true }));
    expect(sentBody(prepared)).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    const usages: unknown[] = [];
    const chunk = (fields: Record<string, unknown>) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'llama-3', ...fields })}\n\n`;
    const upstream = Readable.from([
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] }),
      chunk({ choices: [{ index: 0, delta: { content: 'lo' }, finish_reason: 'stop' }] }),
      chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
      'data: [DONE]\n\n',
    ]);
    let text = '';
    for await (const piece of upstream.pipe(prepared.streamTransform((usage) => usages.push(usage)))) text += piece.toString();
    const types = [...text.matchAll(/^event: (.+)$/gm)].map((match) => match[1]);
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.completed');
    expect(text).not.toContain('[DONE]');
    expect(usages).toHaveLength(1);
  });

  it('names the earlier conversation as previous_response_id in its refusals, and the new input by its place', async () => {
    const history = [{ type: 'message', role: 'robot', content: 'Hi' }];
    const chained = responsesCall(
      'groq',
      { model: 'llama', input: [...history, { role: 'user', content: 'Go on' }] },
      { responsesChain: { historyLength: 1 } },
    );
    expect(await rejectedGatewayError(() => prepareCall(chained))).toMatchObject({ status: 400, param: 'previous_response_id' });
    const fresh = responsesCall('groq', { model: 'llama', input: [{ role: 'user', content: 'Go on' }, ...history] });
    expect(await rejectedGatewayError(() => prepareCall(fresh))).toMatchObject({ status: 400, param: 'input[1].role' });
  });

  it('refuses a built-in tool, naming it and the providers that have it', async () => {
    const error = await rejectedGatewayError(() =>
      prepareCall(responsesCall('anthropic', { model: 'claude', input: 'Hi', tools: [{ type: 'web_search_preview' }] })),
    );
    expect(error).toMatchObject({ status: 400, param: 'tools[0].type', code: 'unsupported_tool' });
    expect(error.message).toContain('web_search_preview');
    expect(error.message).toContain('openai or azure-openai');
  });
});

describe('reasoning on a provider with a thinking budget', () => {
  it('turns reasoning.effort into thinking, with strict compliance off so thinking comes back', async () => {
    const prepared = await prepareCall(responsesCall('anthropic', { model: 'claude-sonnet-4', input: 'Think', reasoning: { effort: 'low' } }));
    const body = sentBody(prepared);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    // Anthropic's max_tokens must exceed the budget: the default room for the answer comes on top.
    expect(body.max_tokens).toBeGreaterThan(1024);
  });

  it('keeps the budget within max_output_tokens, and thinks not at all where no budget fits', async () => {
    const capped = sentBody(
      await prepareCall(responsesCall('anthropic', { model: 'claude', input: 'x', reasoning: { effort: 'high' }, max_output_tokens: 4000 })),
    );
    expect(capped).toMatchObject({ thinking: { budget_tokens: 3999 }, max_tokens: 4000 });
    const tiny = sentBody(
      await prepareCall(responsesCall('anthropic', { model: 'claude', input: 'x', reasoning: { effort: 'high' }, max_output_tokens: 500 })),
    );
    expect(tiny.thinking).toBeUndefined();
  });

  it('thinks for a summary asked for without an effort, and not for effort none', async () => {
    const summary = sentBody(await prepareCall(responsesCall('google', { model: 'gemini-2.5-flash', input: 'x', reasoning: { summary: 'auto' } })));
    expect(summary.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 8192 });
    const none = sentBody(await prepareCall(responsesCall('anthropic', { model: 'claude', input: 'x', reasoning: { effort: 'none' } })));
    expect(none.thinking).toBeUndefined();
  });

  it('passes the effort on as reasoning_effort to a provider without a budget', async () => {
    expect(sentBody(await prepareCall(responsesCall('groq', { model: 'qwen', input: 'x', reasoning: { effort: 'high' } })))).toMatchObject({
      reasoning_effort: 'high',
    });
  });
});
