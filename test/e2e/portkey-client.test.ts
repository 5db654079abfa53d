/**
 * The official `portkey-ai` client, unchanged, pointed at the gateway: its `x-portkey-*` headers and
 * Portkey's config field names are read as the gateway's own, and its answers carry the
 * `x-portkey-*` headers the SDK reads back.
 */
import { Portkey } from 'portkey-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, gatewayFetch, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore } from '../support/gateway-store';

let upstream: FakeUpstream;
const store = connectToGatewayStore();
const run = Date.now().toString(36);

beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

function portkey(options: Record<string, unknown> = {}) {
  const { gatewayUrl, adminKey } = env();
  return new Portkey({ apiKey: adminKey, baseURL: gatewayUrl, ...options });
}

/** The upstream requests that reached one base path of the fake. */
const reached = (prefix: string) => upstream.requests.filter((request) => request.path.startsWith(prefix));

describe('the portkey-ai client through the gateway', () => {
  it('gets a chat completion, with its trace id and metadata on the log and the x-portkey headers back', async () => {
    const traceID = `pk-trace-${run}`;
    const client = portkey({
      provider: 'openai',
      Authorization: 'Bearer sk-portkey-provider',
      customHost: `${upstream.url}/pk-plain/v1`,
      traceID,
      metadata: { _user: 'pk-user', team: 'mobile' },
    });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello from Portkey' }] });
    expect(completion.choices[0]?.message?.content).toContain('Hello from Portkey');
    const headers = completion.getHeaders?.() as Record<string, string> | undefined;
    expect(headers?.['trace-id']).toBe(traceID);
    expect(headers?.['retry-attempt-count']).toBe('0');

    const sent = reached('/pk-plain/v1').at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-portkey-provider');
    // Nothing of Portkey's own travels on to the provider.
    expect(Object.keys(sent.headers).filter((name) => name.startsWith('x-portkey-') || name.startsWith('x-gateway-'))).toEqual([]);

    const [log] = await waitForLogs(traceID);
    expect(log.metadata).toMatchObject({ _user: 'pk-user', team: 'mobile' });
  });

  it('streams a chat completion', async () => {
    const client = portkey({ provider: 'openai', Authorization: 'Bearer sk-portkey-provider', customHost: `${upstream.url}/pk-stream/v1` });
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Stream for Portkey' }], stream: true });
    let text = '';
    for await (const chunk of stream as AsyncIterable<{ choices: { delta?: { content?: string } }[] }>) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toContain('Stream for Portkey');
  });

  it('follows a config with a fallback written in Portkey field names', async () => {
    upstream.script('/pk-down/v1', [{ status: 503, json: { error: { message: 'down', type: 'server_error' } } }]);
    const client = portkey({
      config: {
        strategy: { mode: 'fallback' },
        strict_open_ai_compliance: true,
        targets: [
          { provider: 'openai', api_key: 'sk-first', custom_host: `${upstream.url}/pk-down/v1`, openai_organization: 'org-pk' },
          { provider: 'openai', api_key: 'sk-second', custom_host: `${upstream.url}/pk-up/v1` },
        ],
      },
    });
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'fall back' }] });
    expect(completion.choices[0]?.message?.content).toContain('fall back');
    const headers = completion.getHeaders?.() as Record<string, string> | undefined;
    expect(headers?.['last-used-option-index']).toBe('config.targets[1]');
    expect(reached('/pk-down/v1')[0]?.headers['openai-organization']).toBe('org-pk');
    expect(reached('/pk-up/v1')).toHaveLength(1);
  });

  it('names a config field it refuses as the client wrote it', async () => {
    const client = portkey({ config: { provider: 'bedrock', aws_region: 42 } });
    const refused = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 400 });
    expect(String((refused as Error).message)).toContain('config.aws_region');
  });

  it('calls a catalog provider by its slug, and by the legacy virtual key', async () => {
    const slug = `pk-catalog-${run}`;
    const created = await gatewayFetch('/providers', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ slug, provider: 'openai', api_key: 'sk-catalog-secret', custom_host: `${upstream.url}/pk-catalog/v1` }),
    });
    expect(created.status, await created.clone().text()).toBe(200);

    const bySlug = await portkey({ provider: `@${slug}` }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'by slug' }] });
    expect(bySlug.choices[0]?.message?.content).toContain('by slug');
    const byVirtualKey = await portkey({ virtualKey: slug }).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'by virtual key' }],
    });
    expect(byVirtualKey.choices[0]?.message?.content).toContain('by virtual key');
    const calls = reached('/pk-catalog/v1');
    expect(calls).toHaveLength(2);
    expect(calls.every((call) => call.headers.authorization === 'Bearer sk-catalog-secret')).toBe(true);
  });

  it('renders and runs a saved prompt, with the prompt id the SDK repeats in the body', async () => {
    const slug = `pk-prompt-${run}`;
    await gatewayFetch('/providers', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ slug, provider: 'openai', api_key: 'sk-prompt', custom_host: `${upstream.url}/pk-prompt/v1` }),
    });
    const saved = await gatewayFetch('/prompts', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Portkey ${run}`, provider: `@${slug}`, model: 'gpt-4o-mini', string: 'Tell me about {{topic}}' }),
    });
    const { id } = (await saved.json()) as { id: string };
    expect(id).toBeTruthy();
    const client = portkey();

    const rendered = (await client.prompts.render({ promptID: id, variables: { topic: 'tides' } })) as unknown as {
      data: { messages: { content: string }[] };
    };
    expect(JSON.stringify(rendered.data.messages)).toContain('Tell me about tides');

    // The run answers in the spec's envelope, which the SDK hands over as it came.
    const completion = (await client.prompts.completions.create({ promptID: id, variables: { topic: 'moons' } })) as unknown as {
      status: string;
      body: { choices: { message: { content: string } }[] };
    };
    expect(completion.status).toBe('success');
    expect(completion.body.choices[0]?.message.content).toContain('Tell me about moons');
    const sent = reached('/pk-prompt/v1').at(-1)!.json as Record<string, unknown>;
    expect(sent).not.toHaveProperty('promptID');
    expect(sent).not.toHaveProperty('prompt_id');
  });

  it('sends feedback on a trace, changes it, and another workspace sees none of it', async () => {
    const traceID = `pk-trace-${run}`;
    const created = (await portkey().feedback.create({ traceID, value: 7, weight: 0.5, metadata: { reason: 'helpful' } })) as unknown as {
      status: string;
      feedback_ids: string[];
    };
    expect(created.status).toBe('success');
    const [id] = created.feedback_ids;
    expect(id).toMatch(/^fb_/);
    const changed = (await portkey().feedback.update({ feedbackID: id!, value: -2 })) as unknown as { feedback_ids: string[] };
    expect(changed.feedback_ids).toEqual([id]);

    const trace = await (await gatewayFetch(`/logs/${traceID}`)).json();
    expect(trace.feedback).toEqual([expect.objectContaining({ id, trace_id: traceID, value: -2, weight: 0.5, metadata: { reason: 'helpful' } })]);

    const refused = await portkey({ apiKey: store.otherWorkspaceKey })
      .feedback.update({ feedbackID: id!, value: 10 })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 404 });
    const bad = await portkey()
      .feedback.create({ traceID, value: 11 })
      .catch((error: unknown) => error);
    expect(bad).toMatchObject({ status: 400 });
    expect(String((bad as Error).message)).toContain('value must be a whole number from -10 to 10');
  });
});
