import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../lib/core/errors';
import type { InferenceResult } from '../../../lib/inference/context';
import type { ResponsesChain } from '../../../lib/providers/responses-format/chain';
import { credentialFingerprint, linkFor } from '../../../lib/providers/responses-format/chain';
import type { ConversationItem, ResponsesRequest } from '../../../lib/providers/responses-format/types';
import { findProvider } from '../../../lib/providers/registry';
import type { JsonObject, ResolvedTarget } from '../../../lib/providers/types';
import { checkConversation, nativeLinkOf, responsesBody, runResponse } from '../../../lib/responses/run-response';

const history: ConversationItem[] = [
  { type: 'message', id: 'msg_1', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] },
  { type: 'message', id: 'msg_2', role: 'assistant', content: [{ type: 'output_text', text: 'Hi!', annotations: [] }] },
];
const link = { providerResponseId: 'resp_provider', provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', credential: 'c' };
const ok = { outcome: { ok: true, status: 200, headers: {}, body: '{}' }, path: 'config', retries: 0, cacheStatus: 'DISABLED' } as InferenceResult;

async function runs(request: ResponsesRequest, continued: { history: ConversationItem[]; link?: typeof link }) {
  const calls: Array<{ body: JsonObject; chain: ResponsesChain | undefined }> = [];
  await runResponse(request, continued, async (body, chain) => {
    calls.push({ body, chain });
    return ok;
  });
  return calls;
}

describe('the core body of a create', () => {
  it('sends a fresh request as it came, without what only the gateway acts on', async () => {
    const [call] = await runs({ model: 'm', input: 'Hi', background: false, previous_response_id: null, store: true }, { history: [] });
    expect(call).toEqual({ body: { model: 'm', input: 'Hi', store: true }, chain: undefined });
  });

  it('puts the history before the new input, and says how much of it is history', async () => {
    const [call] = await runs({ model: 'm', input: 'And you?', previous_response_id: 'resp_x' }, { history, link });
    expect(call!.body.input).toEqual([...history, { type: 'message', role: 'user', content: 'And you?' }]);
    expect(call!.body.previous_response_id).toBeUndefined();
    expect(call!.chain).toEqual({ link, historyLength: 2 });
  });

  it('drops the native link once truncation shortened the conversation, keeping what is left of the history', async () => {
    const request: ResponsesRequest = { model: 'm', input: 'Next', truncation: 'auto' };
    const calls: Array<ResponsesChain | undefined> = [];
    let answered = 0;
    await runResponse(request, { history, link }, async (_body, chain) => {
      calls.push(chain);
      // The first try is too long for the provider; the shorter one fits.
      if (answered++ === 0) {
        const error = new GatewayError(400, "This model's maximum context length is 10 tokens.", { code: 'context_length_exceeded' });
        return { ...ok, outcome: { ok: false, status: 400, headers: {}, error, network: false } };
      }
      return ok;
    });
    expect(calls[0]).toEqual({ link, historyLength: 2 });
    expect(calls[1]).toBeUndefined();
  });

  it('leaves out previous_response_id and background in the body', () => {
    expect(responsesBody({ model: 'm', input: 'x', previous_response_id: 'resp_1', background: true, metadata: { a: 'b' } }, 'x')).toEqual({
      model: 'm',
      input: 'x',
      metadata: { a: 'b' },
    });
  });
});

describe('where a response was made natively', () => {
  const openai: ResolvedTarget = { provider: findProvider('openai')!, baseUrl: 'http://127.0.0.1:9/v1', settings: { api_key: 'sk-1' } };
  const withProvider = (provider: string) => ({
    ...openai,
    provider: { ...findProvider(provider)!, operations: [...findProvider(provider)!.operations, 'responses' as const] },
  });

  it('is linked only for a provider that runs the API, answered from the provider, and kept there', () => {
    const native = withProvider('openai');
    const result = { ...ok, target: native };
    expect(nativeLinkOf(result, { model: 'm' }, 'resp_p')).toEqual({
      providerResponseId: 'resp_p',
      provider: 'openai',
      baseUrl: openai.baseUrl,
      credential: credentialFingerprint(native),
    });
    expect(nativeLinkOf({ ...result, target: { ...openai, provider: findProvider('groq')! } }, { model: 'm' }, 'resp_p')).toBeUndefined();
    expect(nativeLinkOf({ ...result, cacheStatus: 'HIT' }, { model: 'm' }, 'resp_p')).toBeUndefined();
    expect(nativeLinkOf({ ...result, cacheStatus: 'SEMANTIC HIT' }, { model: 'm' }, 'resp_p')).toBeUndefined();
    expect(nativeLinkOf(result, { model: 'm', store: false }, 'resp_p')).toBeUndefined();
  });

  it('names the response only to the same provider, base URL and credential', () => {
    const native = withProvider('openai');
    const chain = { link: nativeLinkOf({ ...ok, target: native }, { model: 'm' }, 'resp_p'), historyLength: 2 };
    expect(linkFor(chain, native)).toBeDefined();
    expect(linkFor(chain, { ...native, settings: { api_key: 'sk-2' } })).toBeUndefined();
    expect(linkFor(chain, { ...native, baseUrl: 'http://127.0.0.1:10/v1' })).toBeUndefined();
    expect(linkFor(chain, withProvider('azure-openai'))).toBeUndefined();
    expect(credentialFingerprint(native)).not.toContain('sk-1');
  });
});

describe('checking a background request before it is queued', () => {
  it('refuses what no provider could take, and leaves built-in tools to the attempt', () => {
    expect(() => checkConversation({ model: 'm', input: [{ role: 'robot', content: 'x' }] as unknown as ConversationItem[] }, [])).toThrow(/role/);
    expect(() => checkConversation({ model: 'm', input: 'x', tools: [{ type: 'web_search_preview' }] }, [])).not.toThrow();
  });
});
