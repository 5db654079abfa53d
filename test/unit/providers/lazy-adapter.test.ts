import { describe, expect, it } from 'vitest';
import { anthropicProvider } from '../../../lib/providers/anthropic';
import { anthropicAdapter } from '../../../lib/providers/anthropic/adapter';
import { lazyAdapter } from '../../../lib/providers/lazy-adapter';
import type { PreparedCall, ProviderAdapter, ProviderCall } from '../../../lib/providers/types';
import { anthropicCall } from '../../support/fakes/anthropic';

const prepared = { url: new URL('https://example.com/v1/chat') } as PreparedCall;
const call = {} as ProviderCall;

describe('lazyAdapter', () => {
  it('loads the adapter on the first call, once for calls made while it loads, and calls it directly after', async () => {
    let loads = 0;
    const inner: ProviderAdapter = { prepare: () => prepared, authenticate: () => ({ 'x-api-key': 'k' }) };
    const adapter = lazyAdapter(async () => {
      loads++;
      return inner;
    });
    const first = adapter.prepare(call);
    const second = adapter.authenticate({ method: 'GET', url: new URL('https://example.com'), headers: {} }, call.target);
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe(prepared);
    expect(await second).toEqual({ 'x-api-key': 'k' });
    expect(adapter.prepare(call)).toBe(prepared);
    expect(loads).toBe(1);
  });

  it('tries a load that failed again on the next call', async () => {
    let loads = 0;
    const adapter = lazyAdapter(async () => {
      loads++;
      if (loads === 1) throw new Error('chunk missing');
      return { prepare: () => prepared, authenticate: () => ({}) };
    });
    await expect(adapter.prepare(call)).rejects.toThrow('chunk missing');
    expect(await adapter.prepare(call)).toBe(prepared);
    expect(loads).toBe(2);
  });

  it("gives a provider's definition the answers of its adapter", async () => {
    const body = { messages: [{ role: 'user', content: 'Hello' }], max_tokens: 10 };
    const viaDefinition = await anthropicProvider.adapter.prepare(anthropicCall(body));
    const direct = await anthropicAdapter.prepare(anthropicCall(body));
    expect(viaDefinition.url.href).toBe(direct.url.href);
    expect(viaDefinition.headers).toEqual(direct.headers);
    expect(JSON.parse(viaDefinition.body.toString())).toEqual(JSON.parse(direct.body.toString()));
  });
});
