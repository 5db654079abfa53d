import { generateKeyPairSync } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectChunks, weatherTool } from '../support/chat-stream';
import { startFakeGoogle, type FakeGoogle } from '../support/fakes/google';
import { openaiClient, waitForLogs } from '../support/gateway-client';

const basePath = '/v1/projects/proj-e2e/locations/us-central1';

describe('vertex-ai through the gateway with the official openai client', () => {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  // A throwaway client email per run: the gateway process keeps tokens per service account.
  const clientEmail = `gateway-${Date.now()}@proj-e2e.iam.gserviceaccount.com`;
  let fake: FakeGoogle;
  let serviceAccountClient: OpenAI;
  let bearerClient: OpenAI;
  const serviceAccount = (privateKey = keys.privateKey) => ({
    type: 'service_account',
    project_id: 'proj-e2e',
    private_key_id: 'e2e-key',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    token_uri: fake.tokenUri,
  });
  const configFor = (account: object) => ({
    provider: 'vertex-ai',
    custom_host: `${fake.url}${basePath}`,
    cloudB_region: 'us-central1',
    cloudB_service_account_json: account,
  });

  beforeAll(async () => {
    fake = await startFakeGoogle({
      serviceAccount: { clientEmail, privateKeyId: 'e2e-key', publicKey: keys.publicKey },
      accessTokens: ['ya29.client-supplied'],
    });
    serviceAccountClient = openaiClient({ provider: 'vertex-ai', headers: { 'x-gateway-config': JSON.stringify(configFor(serviceAccount())) } });
    bearerClient = openaiClient({
      provider: 'vertex-ai',
      apiKey: 'ya29.client-supplied',
      headers: {
        'x-gateway-custom-host': `${fake.url}${basePath}`,
        'x-gateway-cloudB-project-id': 'proj-e2e',
        'x-gateway-cloudB-region': 'us-central1',
        'x-cloudB-llm-request-type': 'shared',
      },
    });
  });
  afterAll(() => fake.close());

  it('gets a plain text completion with a service account: one token exchange at its token_uri, then the token is reused', async () => {
    const before = fake.exchanges;
    const traceId = `vertex-text-${Date.now()}`;
    const { data, response } = await serviceAccountClient.chat.completions
      .create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Hello Vertex' }] }, { headers: { 'x-gateway-trace-id': traceId } })
      .withResponse();
    expect(data.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'echo: Hello Vertex' }, finish_reason: 'stop' });
    expect(response.headers.get('x-gateway-provider')).toBe('vertex-ai');
    expect(fake.exchanges).toBe(before + 1);
    const exchange = fake.requests.findLast((request) => request.path === '/token')!;
    expect(exchange.claims).toMatchObject({ iss: clientEmail, aud: fake.tokenUri });
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`${basePath}/publishers/google/models/gemini-2.5-flash:generateContent`);
    expect(sent.headers.authorization).toBe(`Bearer ${fake.issuedTokens.at(-1)}`);
    const [log] = await waitForLogs(traceId);
    expect(log.usage.total_tokens).toBe(data.usage!.total_tokens);

    await serviceAccountClient.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Again' }] });
    expect(fake.exchanges).toBe(before + 1);
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${fake.issuedTokens.at(-1)}`);
  });

  it("streams a Gemini tool call in Vertex's stream shape, usage on the last chunk", async () => {
    const stream = await bearerClient.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Please call a tool for Paris' }],
      tools: [weatherTool],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { toolCalls, toolArguments, finishReason, last } = await collectChunks(stream);
    expect(toolCalls[0]).toMatchObject({ index: 0, id: expect.stringMatching(/^call_/), function: { name: 'get_weather' } });
    expect(toolCalls.every((call) => call.index === 0)).toBe(true);
    expect(JSON.parse(toolArguments())).toEqual({ location: 'example' });
    expect(finishReason).toBe('tool_calls');
    expect(last!.usage?.total_tokens).toBeGreaterThan(0);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`${basePath}/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`);
    expect(sent.headers.authorization).toBe('Bearer ya29.client-supplied');
    expect(sent.headers['x-vertex-ai-llm-request-type']).toBe('shared');
  });

  it('carries a two-turn tool conversation with Gemini, and one with Claude through rawPredict', async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Please call a tool for Paris' }];
    const first = await bearerClient.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool] });
    const call = first.choices[0].message.tool_calls![0];
    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: 'sunny' });
    const second = await bearerClient.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [weatherTool] });
    expect(second.choices[0].message.content).toBe('results: [{"name":"get_weather","response":{"output":"sunny"}}]');

    const claudeMessages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Please call a tool for Rome' }];
    const claudeFirst = await serviceAccountClient.chat.completions.create({
      model: 'claude-sonnet-4@20250514',
      messages: claudeMessages,
      tools: [weatherTool],
    });
    expect(claudeFirst.id).toMatch(/^msg_vrtx_fake/);
    expect(claudeFirst.choices[0].finish_reason).toBe('tool_calls');
    const claudeCall = claudeFirst.choices[0].message.tool_calls![0];
    expect(claudeCall.id).toMatch(/^toolu_fake/);
    expect(fake.requests.at(-1)!.path).toBe(`${basePath}/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict`);
    claudeMessages.push(claudeFirst.choices[0].message, { role: 'tool', tool_call_id: claudeCall.id, content: 'rainy' });
    const stream = await serviceAccountClient.chat.completions.create({
      model: 'claude-sonnet-4@20250514',
      messages: claudeMessages,
      tools: [weatherTool],
      stream: true,
    });
    const { text } = await collectChunks(stream);
    expect(text).toBe('echo: rainy');
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe(`${basePath}/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict`);
    expect(sent.json).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
    expect(sent.json.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: claudeCall.id, content: 'rainy' }] });
  });

  it("surfaces errors: Vertex's own statuses, a wrong access token, and a service account Google turns down", async () => {
    const missing = await bearerClient.chat.completions.create({ model: 'error-404', messages: [{ role: 'user', content: 'hi' }] }).catch((error) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing.error).toMatchObject({ provider: 'vertex-ai', code: 'NOT_FOUND' });

    const wrongToken = openaiClient({ provider: 'vertex-ai', apiKey: 'ya29.expired', headers: { 'x-gateway-custom-host': `${fake.url}${basePath}` } });
    const denied = await wrongToken.chat.completions
      .create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((error) => error);
    expect(denied).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(denied.error).toMatchObject({
      provider: 'vertex-ai',
      code: 'UNAUTHENTICATED',
      message: expect.stringMatching(/invalid authentication credentials/),
    });

    const forged = openaiClient({
      provider: 'vertex-ai',
      headers: { 'x-gateway-config': JSON.stringify(configFor(serviceAccount(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey))) },
    });
    const refused = await forged.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }).catch((error) => error);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(refused.error).toMatchObject({
      provider: 'vertex-ai',
      code: 'service_account_token_error',
      message: expect.stringMatching(/Invalid JWT Signature/),
    });
  });

  it("gets embeddings from :predict with Vertex's token counts", async () => {
    const result = await bearerClient.embeddings.create({ model: 'text-embedding-005', input: ['alpha', 'beta'], dimensions: 3, encoding_format: 'float' });
    expect(result.data.map((item) => item.embedding.length)).toEqual([3, 3]);
    // The fake counts ceil(characters / 4) per input: 2 + 1.
    expect(result.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(fake.requests.at(-1)!.path).toBe(`${basePath}/publishers/google/models/text-embedding-005:predict`);
  });
});
