import { generateKeyPairSync } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PreparedCall, ProviderCall, ProviderSettings, ResolvedTarget } from '../../../lib/providers/types';
import { vertexAiProvider } from '../../../lib/providers/vertex-ai';
import { clearTokenCache } from '../../../lib/providers/vertex-ai/token';
import { chatCall, runTransform, startFakeGoogle, type FakeGoogle } from '../../support/fakes/google';
import { readRecording, readRecordingJson, recordingsPresent } from '../../support/recordings';
import { rejectedGatewayError } from '../../support/gateway-error';

const base = 'https://europe-west4-aiplatform.googleapis.com/v1/projects/proj-1/locations/europe-west4';
const targetWith = (settings: ProviderSettings): ResolvedTarget => ({ provider: vertexAiProvider, baseUrl: base, settings });
const prepare = (body: Record<string, unknown>, settings: ProviderSettings = { api_key: 'ya29.client-token' }, overrides: Partial<ProviderCall> = {}) =>
  vertexAiProvider.adapter.prepare({ ...chatCall(body, targetWith(settings)), ...overrides } as ProviderCall) as Promise<PreparedCall>;

/** A Claude answer and a Claude stream as Vertex relays them (Anthropic's formats), and the tool call in each. */
interface ClaudeAnswers {
  response: unknown;
  stream: string;
  toolCall: { id: string; name: string; arguments: string };
  streamedToolId: string;
}

/**
 * Reads both answers through calls prepared for `request`, unstreamed and streamed (the streamed one
 * names the model with the `anthropic.` prefix, which is not sent), and returns the two calls.
 */
async function expectClaudeAnswersRead(request: { model: string } & Record<string, unknown>, answers: ClaudeAnswers) {
  const prepared = await prepare(request);
  const completion = JSON.parse(String(prepared.readResponse(Buffer.from(JSON.stringify(answers.response))).body));
  const { id, name, arguments: args } = answers.toolCall;
  expect(completion.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { tool_calls: [{ id, function: { name, arguments: args } }] } });

  const streamed = await prepare({ ...request, model: `anthropic.${request.model}`, stream: true });
  const events = await runTransform(
    streamed.streamTransform(() => {}),
    [answers.stream],
  );
  expect(events.some((event) => event.choices?.[0]?.delta?.tool_calls?.[0]?.id === answers.streamedToolId)).toBe(true);
  expect(events.at(-1)).toBe('[DONE]');
  return { prepared, streamed };
}

describe('Vertex AI URLs', () => {
  const urlFor = (settings: ProviderSettings) => vertexAiProvider.baseUrlFor!(settings);

  it('builds the regional and global base URLs from the region and project', () => {
    expect(urlFor({ cloudB_region: 'us-central1', cloudB_project_id: 'my-proj' })).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1',
    );
    expect(urlFor({ cloudB_region: 'global', cloudB_project_id: 'my-proj' })).toBe('https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global');
    expect(urlFor({ cloudB_region: 'us-east5', cloudB_service_account_json: { project_id: 'from-key' } })).toBe(
      'https://us-east5-aiplatform.googleapis.com/v1/projects/from-key/locations/us-east5',
    );
  });

  it('refuses a missing or malformed region or project with a 400 naming the setting', async () => {
    expect((await rejectedGatewayError(() => urlFor({ cloudB_project_id: 'p' }))).param).toBe('cloudB_region');
    expect((await rejectedGatewayError(() => urlFor({ cloudB_region: 'us-central1' }))).param).toBe('cloudB_project_id');
    expect((await rejectedGatewayError(() => urlFor({ cloudB_region: 'evil.com/x', cloudB_project_id: 'p' }))).status).toBe(400);
    expect((await rejectedGatewayError(() => urlFor({ cloudB_region: 'us-central1', cloudB_project_id: 'p/../../x' }))).status).toBe(400);
  });
});

describe('the vertex-ai adapter', () => {
  it("sends Gemini models to publishers/google with the client's access token and the request type header", async () => {
    const prepared = await prepare(
      { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] },
      { api_key: 'ya29.client-token' },
      { requestHeaders: { 'x-cloudb-llm-request-type': 'Dedicated' } },
    );
    expect(prepared.url.href).toBe(`${base}/publishers/google/models/gemini-2.5-flash:generateContent`);
    expect(prepared.headers).toMatchObject({ authorization: 'Bearer ya29.client-token', 'x-vertex-ai-llm-request-type': 'dedicated' });
    expect(prepared.headers['x-goog-api-key']).toBeUndefined();
    expect(JSON.parse(String(prepared.body))).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(
      (
        await rejectedGatewayError(
          prepare({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }, {}, { requestHeaders: { 'x-cloudb-llm-request-type': 'cheap' } }),
        )
      ).param,
    ).toBe('x-cloudB-llm-request-type');
    const missing = await rejectedGatewayError(prepare({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] }, {}));
    expect([missing.status, missing.code]).toEqual([401, 'missing_credentials']);
  });

  const claudeRequest = {
    model: 'claude-sonnet-4@20250514',
    messages: [
      { role: 'system', content: 'Be exact.' },
      { role: 'user', content: 'Where is order A-1042?' },
    ],
    tools: [{ type: 'function', function: { name: 'lookup_order', parameters: { type: 'object', properties: { order_id: { type: 'string' } } } } }],
    max_tokens: 1000,
  };

  it('sends Claude models to publishers/anthropic rawPredict with the Vertex anthropic_version and no model', async () => {
    const prepared = await prepare(claudeRequest);
    expect(prepared.url.href).toBe(`${base}/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict`);
    const body = JSON.parse(String(prepared.body));
    expect(body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', max_tokens: 1000, system: expect.anything(), messages: [{ role: 'user' }] });
    expect(body.model).toBeUndefined();
    expect(body.tools[0].name).toBe('lookup_order');
    // Vertex relays Claude's answer in Anthropic's Message format.
    const answer = {
      id: 'msg_v1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4',
      content: [{ type: 'text', text: 'Shipped.' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 4, output_tokens: 2 },
    };
    const completion = JSON.parse(String(prepared.readResponse(Buffer.from(JSON.stringify(answer))).body));
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'Shipped.' } });
    // The `anthropic.` prefix names the publisher and is not sent.
    const streamed = await prepare({ ...claudeRequest, model: `anthropic.${claudeRequest.model}`, stream: true });
    expect(streamed.url.href).toBe(`${base}/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict`);
    expect(JSON.parse(String(streamed.body)).stream).toBe(true);
  });

  it("reads Vertex errors in Google's shape and Claude errors in Anthropic's", async () => {
    const prepared = await prepare({ model: 'claude-sonnet-4@20250514', messages: [{ role: 'user', content: 'hi' }] });
    const quota = prepared.readError(
      429,
      Buffer.from(
        JSON.stringify({
          error: { code: 429, message: 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model', status: 'RESOURCE_EXHAUSTED' },
        }),
      ),
      {},
    );
    expect(quota.toBody().error).toMatchObject({
      code: 'RESOURCE_EXHAUSTED',
      type: 'rate_limit_error',
      provider: 'vertex-ai',
      message: expect.stringMatching(/^Quota exceeded/),
    });
    const claude = prepared.readError(
      400,
      Buffer.from(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' } })),
      {},
    );
    expect(claude.toBody().error).toMatchObject({ code: 'invalid_request_error', message: 'max_tokens: too large', provider: 'vertex-ai' });
  });

  it("maps embeddings to :predict and counts Vertex's tokens", async () => {
    const prepared = await prepare({ model: 'text-embedding-005', input: ['a', 'bb'], dimensions: 2 }, { api_key: 'ya29.t' }, { operation: 'embeddings' });
    expect(prepared.url.href).toBe(`${base}/publishers/google/models/text-embedding-005:predict`);
    expect(JSON.parse(String(prepared.body))).toEqual({ instances: [{ content: 'a' }, { content: 'bb' }], parameters: { outputDimensionality: 2 } });
    const answer = {
      predictions: [{ embeddings: { values: [1, 2], statistics: { token_count: 1 } } }, { embeddings: { values: [3, 4], statistics: { token_count: 2 } } }],
    };
    const { body, usage } = prepared.readResponse(Buffer.from(JSON.stringify(answer)));
    expect(JSON.parse(String(body))).toMatchObject({
      data: [
        { index: 0, embedding: [1, 2] },
        { index: 1, embedding: [3, 4] },
      ],
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    expect(usage).toEqual({ prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 });
    expect((await rejectedGatewayError(prepare({ model: 'claude-sonnet-4', input: 'x' }, { api_key: 't' }, { operation: 'embeddings' }))).code).toBe(
      'unsupported_operation',
    );
    expect((await rejectedGatewayError(prepare({ model: 'gemini-2.5-flash', prompt: 'x' }, { api_key: 't' }, { operation: 'completions' }))).code).toBe(
      'unsupported_operation',
    );
  });
});

// Claude's answers through Vertex are replayed from the recordings only, read inside the test so a
// clone without them skips it.
describe.skipIf(!recordingsPresent)('the vertex-ai adapter: recorded Claude transcripts', () => {
  it('reads the recorded Claude response and stream', async () => {
    const request = {
      model: 'claude-sonnet-4@20250514',
      messages: [{ role: 'user', content: 'Use the test_tool' }],
      tools: [{ type: 'function', function: { name: 'test_tool', parameters: { type: 'object', properties: { value: { type: 'string' } } } } }],
      max_tokens: 1000,
    };
    const { prepared, streamed } = await expectClaudeAnswersRead(request, {
      response: readRecordingJson<any>('anthropic_messages_nonstream_tool_use_recording.json').response,
      stream: readRecording('anthropic_stream_tool_use.sse'),
      toolCall: { id: 'toolu_011LF2VkWpAfJnTKJcmh1PNf', name: 'test_tool', arguments: '{"value":"test"}' },
      streamedToolId: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
    });
    expect(prepared.url.href).toBe(`${base}/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict`);
    expect(streamed.url.href).toBe(`${base}/publishers/anthropic/models/claude-sonnet-4@20250514:streamRawPredict`);
  });
});

describe('service account tokens', () => {
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const otherKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = 'gateway@proj-1.iam.gserviceaccount.com';
  let fake: FakeGoogle;
  let mode: string | undefined;
  const account = (privateKey = keys.privateKey, tokenUri = fake.tokenUri) => ({
    type: 'service_account',
    project_id: 'proj-1',
    private_key_id: 'key-1',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    token_uri: tokenUri,
  });
  const chat = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] };
  const bearer = async (settings: ProviderSettings) => (await prepare(chat, settings)).headers.authorization;

  beforeAll(async () => {
    fake = await startFakeGoogle({ serviceAccount: { clientEmail, privateKeyId: 'key-1', publicKey: keys.publicKey } });
    mode = process.env.GATEWAY_MODE;
    process.env.GATEWAY_MODE = 'local';
  });
  afterAll(async () => {
    process.env.GATEWAY_MODE = mode;
    await fake.close();
  });
  beforeEach(() => clearTokenCache());
  afterEach(() => vi.useRealTimers());

  it("trades a signed JWT for an access token at the key's token_uri, and reuses it until shortly before it expires", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = Date.now();
    const before = fake.exchanges;
    const settings = { cloudB_service_account_json: account(), api_key: 'sk-ignored-openai-client-key' };
    const first = await bearer(settings);
    expect(fake.exchanges).toBe(before + 1);
    expect(first).toBe(`Bearer ${fake.issuedTokens.at(-1)}`);
    const exchange = fake.requests.findLast((request) => request.path === '/token')!;
    expect(exchange.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(exchange.claims).toMatchObject({ iss: clientEmail, sub: clientEmail, aud: fake.tokenUri, scope: 'https://www.googleapis.com/auth/cloud-platform' });
    expect(exchange.claims!.exp - exchange.claims!.iat).toBe(3600);

    vi.setSystemTime(start + 50 * 60_000);
    expect(await bearer(settings)).toBe(first);
    expect(fake.exchanges).toBe(before + 1);

    // The token lives 3599 s; within five minutes of that it is replaced.
    vi.setSystemTime(start + 55 * 60_000);
    const refreshed = await bearer(settings);
    expect(fake.exchanges).toBe(before + 2);
    expect(refreshed).not.toBe(first);
    expect(await bearer(settings)).toBe(refreshed);
  });

  it('shares one exchange between requests that miss the cache together', async () => {
    const before = fake.exchanges;
    const settings = { cloudB_service_account_json: account() };
    const tokens = await Promise.all(Array.from({ length: 8 }, () => bearer(settings)));
    expect(new Set(tokens).size).toBe(1);
    expect(fake.exchanges).toBe(before + 1);
  });

  it('reports a key the token endpoint turns down as a 401, and does not cache the failure', async () => {
    const settings = { cloudB_service_account_json: account(otherKeys.privateKey) };
    const tokenRequests = () => fake.requests.filter((request) => request.path === '/token').length;
    const before = tokenRequests();
    const error = await rejectedGatewayError(bearer(settings));
    expect([error.status, error.code, error.provider]).toEqual([401, 'service_account_token_error', 'vertex-ai']);
    expect(error.message).toMatch(/Invalid JWT Signature/);
    await rejectedGatewayError(bearer(settings));
    expect(tokenRequests()).toBe(before + 2);
  });

  it('refuses a token_uri on a loopback or private address outside local mode (the address guard applies)', async () => {
    process.env.GATEWAY_MODE = 'aws';
    try {
      const before = fake.requests.length;
      const loopback = await rejectedGatewayError(bearer({ cloudB_service_account_json: account() }));
      expect([loopback.status, loopback.code, loopback.param]).toEqual([400, 'token_uri_not_allowed', 'cloudB_service_account_json.token_uri']);
      const privateAddress = await rejectedGatewayError(bearer({ cloudB_service_account_json: account(keys.privateKey, 'http://10.0.0.7/token') }));
      expect(privateAddress.code).toBe('token_uri_not_allowed');
      expect(fake.requests.length).toBe(before);
    } finally {
      process.env.GATEWAY_MODE = 'local';
    }
  });

  it('refuses an incomplete service account with a 400 naming the field', async () => {
    const { client_email: _email, ...withoutEmail } = account();
    expect((await rejectedGatewayError(bearer({ cloudB_service_account_json: withoutEmail }))).param).toBe('cloudB_service_account_json.client_email');
    expect((await rejectedGatewayError(bearer({ cloudB_service_account_json: { ...account(), private_key: 'not a key' } }))).param).toBe(
      'cloudB_service_account_json.private_key',
    );
  });
});
