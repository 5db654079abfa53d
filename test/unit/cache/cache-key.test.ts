import { describe, expect, it } from 'vitest';
import { defaultPartition, namespacePartition, requestKey, semanticQuery } from '../../../lib/cache/cache-key';
import { findProvider } from '../../../lib/providers/registry';
import type { ResolvedTarget } from '../../../lib/providers/types';

const target = (settings: Record<string, unknown> = { api_key: 'sk-one' }, baseUrl = 'https://api.openai.com/v1'): ResolvedTarget => ({
  provider: findProvider('openai')!,
  baseUrl,
  settings,
});
const embedding = { provider: '@embedder', model: 'text-embedding-3-small' };
const plain = { forwardHeaders: {}, strictApiCompliance: true };
const chat = (last: unknown, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
    { role: 'user', content: last },
  ],
  ...extra,
});

describe('requestKey', () => {
  it('ignores property order and delivery fields, never the answer-changing ones', () => {
    const key = requestKey('chat', target(), { model: 'm', messages: [{ role: 'user', content: 'x' }] }, plain);
    expect(
      requestKey(
        'chat',
        target(),
        { messages: [{ content: 'x', role: 'user' }], model: 'm', stream: true, stream_options: { include_usage: true }, user: 'u1' },
        plain,
      ),
    ).toBe(key);
    expect(requestKey('chat', target(), { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 0 }, plain)).not.toBe(key);
    expect(requestKey('completions', target(), { model: 'm', messages: [{ role: 'user', content: 'x' }] }, plain)).not.toBe(key);
    expect(
      requestKey('chat', target({ api_key: 'sk-one' }, 'https://other.example/v1'), { model: 'm', messages: [{ role: 'user', content: 'x' }] }, plain),
    ).not.toBe(key);
    // The credential partitions the cache (defaultPartition); the key itself never holds it.
    expect(requestKey('chat', target({ api_key: 'sk-two' }), { model: 'm', messages: [{ role: 'user', content: 'x' }] }, plain)).toBe(key);
    expect(defaultPartition({}, target({ api_key: 'sk-two' }))).not.toBe(defaultPartition({}, target()));
    // A target's routing and hook settings are not the request the provider gets.
    const configured = target({ api_key: 'sk-one', retry: { attempts: 2 }, cache: { mode: 'simple', max_age: 60 }, after_request_hooks: [{ id: 'h' }] });
    expect(requestKey('chat', configured, { model: 'm', messages: [{ role: 'user', content: 'x' }] }, plain)).toBe(key);
    expect(
      requestKey('chat', target({ api_key: 'sk-one', api_version: '2024-10-21' }), { model: 'm', messages: [{ role: 'user', content: 'x' }] }, plain),
    ).not.toBe(key);
    // What shapes the answer besides the body: a forwarded header, and content_blocks when not strict.
    expect(
      requestKey(
        'chat',
        target(),
        { model: 'm', messages: [{ role: 'user', content: 'x' }] },
        { forwardHeaders: { 'anthropic-beta': 'b1' }, strictApiCompliance: true },
      ),
    ).not.toBe(key);
    expect(
      requestKey('chat', target(), { model: 'm', messages: [{ role: 'user', content: 'x' }] }, { forwardHeaders: {}, strictApiCompliance: false }),
    ).not.toBe(key);
    expect(namespacePartition('team')).toMatch(/^ns-[0-9a-f]{32}$/);
  });
});

describe("requestKey from the client's bytes", () => {
  it('gives the key the body gives, however the bytes order it', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'x' }], temperature: 0 };
    const key = requestKey('chat', target(), body, plain);
    const bytes = Buffer.from(JSON.stringify(body));
    expect(requestKey('chat', target(), body, plain, bytes)).toBe(key);
    // Remembered by the bytes' hash: asked again, the same.
    expect(requestKey('chat', target(), body, plain, bytes)).toBe(key);
    const reordered = { temperature: 0, messages: [{ content: 'x', role: 'user' }], model: 'm', stream: true };
    expect(requestKey('chat', target(), reordered, plain, Buffer.from(JSON.stringify(reordered)))).toBe(key);
    const other = { ...body, temperature: 1 };
    expect(requestKey('chat', target(), other, plain, Buffer.from(JSON.stringify(other)))).not.toBe(key);
  });
});

describe('semanticQuery', () => {
  it('embeds only the last user message and scopes on everything else', () => {
    const query = semanticQuery(target(), chat('What is the capital of France?'), plain, 'p1', embedding)!;
    expect(query.text).toBe('What is the capital of France?');
    expect(query.scope).toMatch(/^sc-[0-9a-f]{32}$/);
    // Another wording of the last user message, the same scope.
    expect(semanticQuery(target(), chat('Capital of France?', { stream: true, user: 'u2' }), plain, 'p1', embedding)!.scope).toBe(query.scope);
    // Anything else changes it.
    const others = [
      semanticQuery(target(), chat('Capital of France?', { temperature: 0.3 }), plain, 'p1', embedding),
      semanticQuery(target(), { ...chat('Capital of France?'), model: 'gpt-4o' }, plain, 'p1', embedding),
      semanticQuery(target(), chat('Capital of France?'), plain, 'p2', embedding),
      semanticQuery(target(), chat('Capital of France?'), plain, 'p1', { ...embedding, model: 'text-embedding-3-large' }),
      semanticQuery(target({}, 'https://other.example/v1'), chat('Capital of France?'), plain, 'p1', embedding),
      semanticQuery(
        target(),
        {
          ...chat('Capital of France?'),
          messages: [
            { role: 'system', content: 'Be long.' },
            { role: 'user', content: 'Capital of France?' },
          ],
        },
        plain,
        'p1',
        embedding,
      ),
    ];
    for (const other of others) expect(other!.scope).not.toBe(query.scope);
  });

  it('counts messages after the last user message as conversation, and reads text parts', () => {
    const withToolResult = {
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather' },
            { type: 'text', text: 'in Paris?' },
          ],
        },
        { role: 'tool', tool_call_id: 't1', content: '12 °C' },
      ],
    };
    const query = semanticQuery(target(), withToolResult, plain, 'p', embedding)!;
    expect(query.text).toBe('Weather\nin Paris?');
    const otherResult = { ...withToolResult, messages: [withToolResult.messages[0], { role: 'tool', tool_call_id: 't1', content: '30 °C' }] };
    expect(semanticQuery(target(), otherResult, plain, 'p', embedding)!.scope).not.toBe(query.scope);
  });

  it('has nothing to embed without a user message, or with one that is not all text', () => {
    expect(semanticQuery(target(), { model: 'm', messages: [{ role: 'system', content: 'x' }] }, plain, 'p', embedding)).toBeUndefined();
    expect(semanticQuery(target(), { model: 'm', messages: [{ role: 'user', content: '   ' }] }, plain, 'p', embedding)).toBeUndefined();
    expect(
      semanticQuery(
        target(),
        {
          model: 'm',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what is' },
                { type: 'image_url', image_url: { url: 'https://x/y.png' } },
              ],
            },
          ],
        },
        plain,
        'p',
        embedding,
      ),
    ).toBeUndefined();
    expect(semanticQuery(target(), { model: 'm', prompt: 'x' }, plain, 'p', embedding)).toBeUndefined();
  });
});
