import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bedrockProvider } from '../../../lib/providers/bedrock';
import type { JsonObject, ProviderCall } from '../../../lib/providers/types';
import { checkConverseRequest, pixelPng } from '../../support/fakes/bedrock';
import { chatCall } from '../../support/fakes/google';
import { rejectedGatewayError } from '../../support/gateway-error';

const settings = { cloudA_access_key_id: 'AKIDUNIT', cloudA_secret_access_key: 'unit/secret', cloudA_region: 'eu-west-1' };
const claude = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

const target = { provider: bedrockProvider, baseUrl: 'https://bedrock-runtime.eu-west-1.amazonaws.com', settings };
const call = (body: JsonObject, overrides: Partial<ProviderCall> = {}): ProviderCall => chatCall({ model: claude, ...body }, target, overrides) as ProviderCall;

async function converse(body: JsonObject, overrides: Partial<ProviderCall> = {}) {
  const prepared = await bedrockProvider.adapter.prepare(call(body, overrides));
  return { prepared, json: JSON.parse(prepared.body as string) };
}

const weather = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};
const clock = { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } };

describe('bedrock request mapping', () => {
  it('maps a multi-turn tool conversation to Converse blocks, merging turns so roles alternate', async () => {
    const { prepared, json } = await converse({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
        { role: 'user', content: 'Weather and time in Oslo?' },
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":"4C"}' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '14:05' }] },
        { role: 'user', content: 'And tomorrow?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo","day":"tomorrow"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_3', content: '{"temp":"2C"}' },
      ],
      tools: [weather, clock],
      max_completion_tokens: 256,
      top_p: 0.9,
      stop: 'STOP',
    });
    expect(prepared.url.href).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(json).toEqual({
      system: [{ text: 'You are terse.' }, { text: 'Use metric units.' }],
      messages: [
        { role: 'user', content: [{ text: 'Weather and time in Oslo?' }] },
        {
          role: 'assistant',
          content: [
            { text: 'Checking both.' },
            { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Oslo' } } },
            { toolUse: { toolUseId: 'call_2', name: 'get_time', input: {} } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 'call_1', content: [{ text: '{"temp":"4C"}' }] } },
            { toolResult: { toolUseId: 'call_2', content: [{ text: '14:05' }] } },
            { text: 'And tomorrow?' },
          ],
        },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_3', name: 'get_weather', input: { city: 'Oslo', day: 'tomorrow' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'call_3', content: [{ text: '{"temp":"2C"}' }] } }] },
      ],
      inferenceConfig: { maxTokens: 256, topP: 0.9, stopSequences: ['STOP'] },
      toolConfig: {
        tools: [
          { toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: weather.function.parameters } } },
          { toolSpec: { name: 'get_time', inputSchema: { json: clock.function.parameters } } },
        ],
      },
    });
    expect(checkConverseRequest(json)).toEqual([]);
  });

  it('signs the call and asks for the event stream when streaming', async () => {
    const { prepared } = await converse({ messages: [{ role: 'user', content: 'hi' }], stream: true }, { stream: true, forwardHeaders: { 'x-trace': 'abc' } });
    expect(prepared.url.pathname).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
    expect(prepared.headers).toMatchObject({ accept: 'application/vnd.amazon.eventstream', 'content-type': 'application/json', 'x-trace': 'abc' });
    expect(prepared.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDUNIT\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expect(prepared.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
  });

  it('maps images: data URLs to bytes, s3:// to an S3 location; other formats are a 400', async () => {
    const png = `data:image/png;base64,${pixelPng.toString('base64')}`;
    const { json } = await converse({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: png, detail: 'high' } },
            { type: 'image_url', image_url: { url: 'data:image/jpg;base64,/9j/4AAQ' } },
            { type: 'image_url', image_url: { url: 's3://bucket/photos/cat.webp' } },
          ],
        },
      ],
    });
    expect(json.messages[0].content).toEqual([
      { text: 'Compare' },
      { image: { format: 'png', source: { bytes: pixelPng.toString('base64') } } },
      { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
      { image: { format: 'webp', source: { s3Location: { uri: 's3://bucket/photos/cat.webp' } } } },
    ]);
    const error = await rejectedGatewayError(
      converse({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/svg+xml;base64,PHN2Zz4=' } }] }] }),
    );
    expect(error).toMatchObject({ status: 400, param: 'messages[0].content[0].image_url.url' });
    expect(error.message).toMatch(/PNG, JPEG, GIF or WebP/);
  });

  it('maps file parts to documents with names Bedrock accepts, and refuses file ids', async () => {
    const pdf = 'data:application/pdf;base64,JVBERi0xLjQ=';
    const { json } = await converse({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'file', file: { file_data: pdf, filename: 'Q3 report_final.v2.pdf' } },
            { type: 'file', file: { file_data: pdf, filename: 'Q3 report_final.v2.pdf' } },
            { type: 'file', file: { file_data: 'data:text/csv;base64,YSxiCg==' } },
          ],
        },
      ],
    });
    expect(json.messages[0].content).toEqual([
      { document: { format: 'pdf', name: 'Q3 report-final-v2', source: { bytes: 'JVBERi0xLjQ=' } } },
      { document: { format: 'pdf', name: 'Q3 report-final-v2 (2)', source: { bytes: 'JVBERi0xLjQ=' } } },
      { document: { format: 'csv', name: 'document', source: { bytes: 'YSxiCg==' } } },
    ]);
    const error = await rejectedGatewayError(converse({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }] }));
    expect(error.message).toMatch(/file_data/);
  });

  it('maps tool_choice auto, required and a named function; a name not in tools is a 400', async () => {
    const messages = [{ role: 'user', content: 'hi' }];
    expect((await converse({ messages, tools: [weather], tool_choice: 'auto' })).json.toolConfig.toolChoice).toEqual({ auto: {} });
    expect((await converse({ messages, tools: [weather], tool_choice: 'required' })).json.toolConfig.toolChoice).toEqual({ any: {} });
    expect(
      (await converse({ messages, tools: [weather, clock], tool_choice: { type: 'function', function: { name: 'get_time' } } })).json.toolConfig.toolChoice,
    ).toEqual({ tool: { name: 'get_time' } });
    expect((await converse({ messages, tools: [weather] })).json.toolConfig.toolChoice).toBeUndefined();
    expect(await rejectedGatewayError(converse({ messages, tools: [weather], tool_choice: { type: 'function', function: { name: 'nope' } } }))).toMatchObject({
      status: 400,
      param: 'tool_choice.function.name',
    });
    expect(await rejectedGatewayError(converse({ messages, tools: [{ type: 'web_search' }] }))).toMatchObject({ status: 400, param: 'tools[0]' });
  });

  it('handles tool_choice "none": no tools, unless the history has tool blocks (then the tools stay, without a choice)', async () => {
    expect((await converse({ messages: [{ role: 'user', content: 'hi' }], tools: [weather], tool_choice: 'none' })).json.toolConfig).toBeUndefined();
    const history = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ];
    expect((await converse({ messages: history, tools: [weather], tool_choice: 'none' })).json.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: weather.function.parameters } } }],
    });
    // Without tools, specs for the history's tools are made up so Bedrock accepts the tool blocks.
    const { json } = await converse({ messages: history });
    expect(json.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'A tool used earlier in this conversation.',
            inputSchema: { json: { type: 'object', properties: {} } },
          },
        },
      ],
    });
    expect(checkConverseRequest(json)).toEqual([]);
  });

  it('emulates response_format with a forced tool, and refuses it together with tools', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const { json } = await converse({
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'final answer', schema } },
    });
    expect(json.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'final_answer',
            description: 'Give the final answer by calling this tool with it as the input, as a JSON object.',
            inputSchema: { json: schema },
          },
        },
      ],
      toolChoice: { tool: { name: 'final_answer' } },
    });
    expect((await converse({ messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } })).json.toolConfig.toolChoice).toEqual({
      tool: { name: 'json_response' },
    });
    expect((await converse({ messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'text' } })).json.toolConfig).toBeUndefined();
    expect(
      await rejectedGatewayError(converse({ messages: [{ role: 'user', content: 'hi' }], tools: [weather], response_format: { type: 'json_object' } })),
    ).toMatchObject({ status: 400, param: 'response_format' });
  });

  it('drops parameters Converse has no field for, and passes documented extras through', async () => {
    const { json } = await converse({
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0,
      seed: 3,
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      logit_bias: { 1: 2 },
      logprobs: true,
      top_logprobs: 2,
      user: 'u-1',
      metadata: { a: 'b' },
      parallel_tool_calls: false,
      stream_options: { include_usage: true },
      top_k: 40,
      guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '1' },
      additionalModelRequestFields: { anthropic_beta: ['x'] },
    });
    expect(json).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hi' }] }],
      inferenceConfig: { temperature: 0 },
      additionalModelRequestFields: { top_k: 40, anthropic_beta: ['x'] },
      guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '1' },
    });
    expect(checkConverseRequest(json)).toEqual([]);
    // top_k is documented for Anthropic models only.
    expect(
      (await converse({ model: 'amazon.nova-pro-v1:0', messages: [{ role: 'user', content: 'hi' }], top_k: 40 })).json.additionalModelRequestFields,
    ).toBeUndefined();
  });

  it('sends thinking and replays signed reasoning only with strict API compliance off', async () => {
    const messages = [
      { role: 'user', content: 'think' },
      {
        role: 'assistant',
        content: 'Done.',
        content_blocks: [
          { type: 'thinking', thinking: 'Hmm.', signature: 'sig==' },
          { type: 'text', text: 'Done.' },
        ],
      },
      { role: 'user', content: 'again' },
    ];
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    const loose = await converse({ messages, thinking }, { strictApiCompliance: false });
    expect(loose.json.additionalModelRequestFields).toEqual({ thinking });
    expect(loose.json.messages[1].content).toEqual([{ reasoningContent: { reasoningText: { text: 'Hmm.', signature: 'sig==' } } }, { text: 'Done.' }]);
    const strict = await converse({ messages, thinking });
    expect(strict.json.additionalModelRequestFields).toBeUndefined();
    expect(strict.json.messages[1].content).toEqual([{ text: 'Done.' }]);
  });

  it('answers bad input with clear 400s', async () => {
    const cases: Array<[JsonObject, string | null, RegExp]> = [
      [{ messages: [{ role: 'user', content: 'hi' }], n: 2 }, 'n', /one answer/],
      [{ messages: [{ role: 'system', content: 'only system' }] }, 'messages', /user message/],
      [{ messages: [{ role: 'user', content: '' }] }, 'messages[0].content', /no content/],
      [
        { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }] },
        'messages[0].content[0].type',
        /input_audio/,
      ],
      [
        {
          messages: [
            { role: 'user', content: 'x' },
            { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] },
          ],
        },
        'messages[1].tool_calls[0].function.arguments',
        /JSON object/,
      ],
      [{ messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].tool_call_id', /tool_call_id/],
      [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role', /tool messages/],
      [{ messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'bad name!' } }] }, 'tools[0].function.name', /1-64/],
    ];
    for (const [body, param, message] of cases) {
      const error = await rejectedGatewayError(converse(body));
      expect(error.status).toBe(400);
      expect(error.param).toBe(param);
      expect(error.message).toMatch(message);
    }
    expect(await rejectedGatewayError(() => bedrockProvider.adapter.prepare(call({ prompt: 'hi' }, { operation: 'completions' })))).toMatchObject({
      status: 400,
      message: expect.stringContaining('/v1/chat/completions'),
    });
  });
});

describe('bedrock remote images', () => {
  let server: Server;
  let base: string;
  const mode = process.env.GATEWAY_MODE;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/pixel.png') return res.end(pixelPng);
      if (req.url === '/big.png') return res.end(Buffer.concat([pixelPng, Buffer.alloc(4_000_000)]));
      if (req.url === '/page.html') return res.end('<html></html>');
      res.statusCode = 404;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    if (mode === undefined) delete process.env.GATEWAY_MODE;
    else process.env.GATEWAY_MODE = mode;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const withImage = (url: string) => converse({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] });

  it('fetches an http(s) image through the guarded client and sends its bytes', async () => {
    process.env.GATEWAY_MODE = 'local';
    const { json } = await withImage(`${base}/pixel.png`);
    expect(json.messages[0].content).toEqual([{ image: { format: 'png', source: { bytes: pixelPng.toString('base64') } } }]);
  });

  it('refuses images it cannot use, with a 400 that says why', async () => {
    process.env.GATEWAY_MODE = 'local';
    for (const [path, reason] of [
      ['/missing.png', /status 404/],
      ['/big.png', /larger than Bedrock's 3750000 byte limit/],
      ['/page.html', /not a PNG, JPEG, GIF or WebP image/],
    ] as const) {
      const error = await rejectedGatewayError(withImage(`${base}${path}`));
      expect(error).toMatchObject({ status: 400, param: 'messages[0].content[0].image_url.url' });
      expect(error.message).toMatch(reason);
    }
  });

  it('does not reach private addresses outside local mode (SSRF guard)', async () => {
    delete process.env.GATEWAY_MODE;
    const error = await rejectedGatewayError(withImage(`${base}/pixel.png`));
    expect(error.status).toBe(400);
    expect(error.message).toMatch(/not allowed/);
  });
});

describe('bedrock embeddings mapping', () => {
  const embed = async (body: JsonObject) => bedrockProvider.adapter.prepare(call(body, { operation: 'embeddings' }));

  it('sends Titan one text and Cohere a list, to InvokeModel', async () => {
    const titan = await embed({ model: 'amazon.titan-embed-text-v2:0', input: ['one text'], dimensions: 256 });
    expect(titan.url.pathname).toBe('/model/amazon.titan-embed-text-v2%3A0/invoke');
    expect(JSON.parse(titan.body as string)).toEqual({ inputText: 'one text', dimensions: 256 });
    const titanAnswer = titan.readResponse(Buffer.from(JSON.stringify({ embedding: [0.5, -0.25], inputTextTokenCount: 2 })));
    expect(JSON.parse(titanAnswer.body as string)).toEqual({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.5, -0.25] }],
      model: 'amazon.titan-embed-text-v2:0',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    });

    const cohere = await embed({ model: 'cohere.embed-english-v3', input: ['a', 'b'], encoding_format: 'base64', input_type: 'search_query' });
    expect(JSON.parse(cohere.body as string)).toEqual({ texts: ['a', 'b'], input_type: 'search_query' });
    const cohereAnswer = JSON.parse(
      cohere.readResponse(
        Buffer.from(
          JSON.stringify({
            embeddings: [
              [1, 2],
              [3, 4],
            ],
            response_type: 'embeddings_floats',
          }),
        ),
      ).body as string,
    );
    const decoded = cohereAnswer.data.map((item: { embedding: string }) => [...new Float32Array(new Uint8Array(Buffer.from(item.embedding, 'base64')).buffer)]);
    expect(decoded).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('refuses what the models cannot do', async () => {
    expect(await rejectedGatewayError(embed({ model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'] }))).toMatchObject({ status: 400, param: 'input' });
    expect(await rejectedGatewayError(embed({ model: 'meta.llama3-8b-instruct-v1:0', input: 'a' }))).toMatchObject({ status: 400, param: 'model' });
    expect(await rejectedGatewayError(embed({ model: 'cohere.embed-english-v3', input: 'a', dimensions: 256 }))).toMatchObject({
      status: 400,
      param: 'dimensions',
    });
    expect(await rejectedGatewayError(embed({ model: 'cohere.embed-english-v3', input: [[1, 2]] }))).toMatchObject({ status: 400, param: 'input' });
  });
});
