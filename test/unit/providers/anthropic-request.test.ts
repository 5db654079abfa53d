import { describe, expect, it } from 'vitest';
import { anthropicProvider, toMessagesRequest } from '../../../lib/providers/anthropic';
import { anthropicBodyFor, checkMessagesRequest, prepareAnthropic } from '../../support/fakes/anthropic';

const user = (content: unknown) => ({ role: 'user', content });
const headers = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

/** The body, after checking that Anthropic would accept it. */
function accepted(body: Record<string, unknown>, options: Parameters<typeof anthropicBodyFor>[1] = {}) {
  const sent = anthropicBodyFor(body, options);
  expect(checkMessagesRequest(headers, sent)).toEqual([]);
  return sent;
}

describe('anthropic request: messages', () => {
  it('moves system and developer messages to system and defaults max_tokens to 4096', () => {
    expect(accepted({ messages: [{ role: 'system', content: 'Be brief.' }, user('Hi')] })).toEqual({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 4096,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const sent = accepted({
      messages: [
        { role: 'system', content: 'One.' },
        user('Hi'),
        { role: 'developer', content: [{ type: 'text', text: 'Two.', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    expect(sent.system).toEqual([
      { type: 'text', text: 'One.' },
      { type: 'text', text: 'Two.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(sent.messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('maps image URLs, data URLs, PDFs and text files to image and document blocks', () => {
    const sent = accepted({
      messages: [
        user([
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0x' } },
          { type: 'file', file: { file_data: `data:text/plain;base64,${Buffer.from('plain notes').toString('base64')}` } },
          { type: 'file', file: { file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' } },
        ]),
      ],
    });
    expect(sent.messages[0].content).toEqual([
      { type: 'text', text: 'What is in these?' },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'report.pdf' },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain notes' } },
      { type: 'document', source: { type: 'file', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' } },
    ]);
  });

  it('round-trips a multi-turn tool conversation: tool_use, one user turn of tool_results, a follow-up', () => {
    const sent = accepted({
      messages: [
        { role: 'system', content: 'You are a weather bot.' },
        user('Weather in Paris and Rome?'),
        {
          role: 'assistant',
          content: 'Checking both.',
          tool_calls: [
            { id: 'toolu_p', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
            { id: 'toolu_r', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_p', content: '18C' },
        { role: 'tool', tool_call_id: 'toolu_r', content: [{ type: 'text', text: '24C' }] },
        user('And tomorrow?'),
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_t', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'toolu_t', content: 'rain' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather by city',
            parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
          },
        },
      ],
    });
    expect(sent.system).toBe('You are a weather bot.');
    expect(sent.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_use', id: 'toolu_p', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'toolu_r', name: 'get_weather', input: { location: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_p', content: '18C' },
          { type: 'tool_result', tool_use_id: 'toolu_r', content: '24C' },
          { type: 'text', text: 'And tomorrow?' },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_t', name: 'get_weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_t', content: 'rain' }] },
    ]);
    expect(sent.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Weather by city',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
    ]);
  });

  it('merges consecutive same-role messages so roles alternate', () => {
    const sent = accepted({
      messages: [
        user('a'),
        user([{ type: 'text', text: 'b' }]),
        { role: 'assistant', content: 'c' },
        { role: 'assistant', content: '' },
        { role: 'assistant', content: 'd' },
        user('e'),
      ],
    });
    expect(sent.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'c' },
          { type: 'text', text: 'd' },
        ],
      },
      { role: 'user', content: 'e' },
    ]);
  });

  it('sends thinking blocks from content_blocks back before the text and tool use', () => {
    const sent = accepted(
      {
        messages: [
          user('Weather?'),
          {
            role: 'assistant',
            content: 'Let me look.',
            content_blocks: [{ type: 'thinking', thinking: 'Need the tool.', signature: 'sig==' }],
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'w', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
        ],
        thinking: { type: 'enabled', budget_tokens: 2048 },
        tools: [{ type: 'function', function: { name: 'w' } }],
      },
      { strict: false },
    );
    expect(sent.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'Need the tool.', signature: 'sig==' },
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_1', name: 'w', input: {} },
    ]);
    expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    // max_tokens must exceed the budget: the default leaves 4096 on top of it.
    expect(sent.max_tokens).toBe(2048 + 4096);
    expect(sent.tools).toEqual([{ name: 'w', input_schema: { type: 'object', properties: {} } }]);
  });

  it('does not repeat content when content_blocks already hold the text', () => {
    const sent = accepted(
      {
        messages: [
          user('q'),
          {
            role: 'assistant',
            content: 'A.',
            content_blocks: [
              { type: 'redacted_thinking', data: 'xx' },
              { type: 'text', text: 'A.' },
            ],
          },
          user('more'),
        ],
      },
      { strict: false },
    );
    expect(sent.messages[1].content).toEqual([
      { type: 'redacted_thinking', data: 'xx' },
      { type: 'text', text: 'A.' },
    ]);
  });
});

describe('anthropic request: parameters', () => {
  it('maps sampling, stop, user, max_completion_tokens and streaming', () => {
    const sent = accepted(
      {
        messages: [user('Hi')],
        temperature: 0.3,
        top_p: 0.9,
        top_k: 40,
        stop: 'END',
        user: 'user-42',
        max_completion_tokens: 300,
        max_tokens: 999,
        seed: 7,
        presence_penalty: 1,
        frequency_penalty: 1,
        stream: true,
        stream_options: { include_usage: true },
        logit_bias: {},
      },
      { stream: true },
    );
    expect(sent).toEqual({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 300,
      messages: [{ role: 'user', content: 'Hi' }],
      stop_sequences: ['END'],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: 'user-42' },
      stream: true,
    });
    expect(accepted({ messages: [user('Hi')], max_tokens: 12, stop: ['a', 'b'] })).toMatchObject({ max_tokens: 12, stop_sequences: ['a', 'b'] });
  });

  it.each([
    ['auto', true, { type: 'auto' }],
    ['auto', false, { type: 'auto', disable_parallel_tool_use: true }],
    ['required', true, { type: 'any' }],
    ['required', false, { type: 'any', disable_parallel_tool_use: true }],
    ['none', false, { type: 'none' }],
    [{ type: 'function', function: { name: 'f' } }, false, { type: 'tool', name: 'f', disable_parallel_tool_use: true }],
  ])('maps tool_choice %j with parallel_tool_calls %s', (choice, parallel, expected) => {
    const sent = accepted({
      messages: [user('Hi')],
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      tool_choice: choice,
      parallel_tool_calls: parallel,
    });
    expect(sent.tool_choice).toEqual(expected);
  });

  it('leaves tool_choice out when it is the default', () => {
    expect(accepted({ messages: [user('Hi')], tools: [{ type: 'function', function: { name: 'f' } }] }).tool_choice).toBeUndefined();
    expect(accepted({ messages: [user('Hi')], tool_choice: 'none' })).not.toHaveProperty('tool_choice');
  });

  it('asks for response_format JSON through one forced tool', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const sent = accepted({ messages: [user('A city')], response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } } });
    expect(sent.tools).toEqual([{ name: 'answer', description: expect.any(String), input_schema: schema }]);
    expect(sent.tool_choice).toEqual({ type: 'tool', name: 'answer' });
    expect(accepted({ messages: [user('JSON please')], response_format: { type: 'json_object' } }).tools[0]).toMatchObject({
      name: 'json_object',
      input_schema: { type: 'object' },
    });
    expect(accepted({ messages: [user('x')], response_format: { type: 'text' } })).not.toHaveProperty('tools');
  });

  it('builds the body without model for other hosts of Claude', () => {
    const { body, mapping } = toMessagesRequest(
      { model: 'claude-x', messages: [user('Hi') as any], stream: true },
      { provider: 'vertex-ai', strictApiCompliance: true, stream: true },
    );
    expect(body).toEqual({ max_tokens: 4096, messages: [{ role: 'user', content: 'Hi' }], stream: true });
    expect(mapping).toEqual({ provider: 'vertex-ai', strictApiCompliance: true });
  });
});

describe('anthropic request: what is a 400', () => {
  const rejects = (body: Record<string, unknown>, pattern: RegExp, param: string | null, options = {}) => {
    let caught: any;
    try {
      prepareAnthropic(body, options);
    } catch (error) {
      caught = error;
    }
    expect(caught?.status).toBe(400);
    expect(caught.message).toMatch(pattern);
    expect(caught.param).toBe(param);
  };

  it('rejects thinking under strict API compliance, explaining the switch', () => {
    rejects({ messages: [user('x')], thinking: { type: 'enabled', budget_tokens: 1024 } }, /strict_api_compliance: false/, 'thinking');
  });

  it.each([
    [{ n: 2 }, /n is not supported for anthropic: anthropic returns one choice/, 'n'],
    [{ logprobs: true }, /log probabilities/, 'logprobs'],
    [{ logit_bias: { '50256': -100 } }, /token biasing/, 'logit_bias'],
    [{ functions: [{ name: 'f' }] }, /use tools and tool_choice/, 'functions'],
    [{ modalities: ['text', 'audio'] }, /audio/, 'audio'],
    [{ tool_choice: 'required' }, /no tools were sent/, 'tool_choice'],
    [{ tools: [{ type: 'function', function: { name: 'f' } }], response_format: { type: 'json_object' } }, /cannot be combined with tools/, 'response_format'],
    [{ tools: [{ type: 'custom', custom: { name: 'f' } }] }, /function tools only/, 'tools[0]'],
  ])('rejects %j', (extra, pattern, param) => {
    rejects({ messages: [user('x')], ...extra }, pattern, param);
  });

  it.each([
    [[{ role: 'system', content: 'only system' }], /at least one user or assistant message/, 'messages'],
    [[user([{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }])], /does not accept audio/, 'messages[0].content[0]'],
    [[user([{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }])], /image\/jpeg.*got image\/bmp/, 'messages[0].content[0].image_url.url'],
    [
      [user([{ type: 'image_url', image_url: { url: 'ftp://example.com/x.png' } }])],
      /http\(s\) URL or a base64 data URL/,
      'messages[0].content[0].image_url.url',
    ],
    [[user([{ type: 'file', file: { file_data: 'JVBERi0x' } }])], /base64 data URL/, 'messages[0].content[0].file.file_data'],
    [
      [user('x'), { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{not json' } }] }],
      /JSON object string/,
      'messages[1].tool_calls[0].function.arguments',
    ],
    [[user('x'), { role: 'function', name: 'f', content: 'r' }], /deprecated function role/, 'messages[1].role'],
    [[user('x'), { role: 'tool', content: 'r' }], /tool_call_id is required/, 'messages[1].tool_call_id'],
  ])('rejects messages %j', (messages, pattern, param) => {
    rejects({ messages }, pattern, param);
  });

  it('rejects text completions and embeddings', () => {
    rejects({ prompt: 'x' }, /Text completions .* not supported by anthropic/, null, { operation: 'completions' });
    rejects({ input: 'x' }, /Embeddings are not supported by anthropic/, null, { operation: 'embeddings' });
  });
});

describe('anthropic request: URL and headers', () => {
  it('posts to {base}/messages with x-api-key, the default version and no bearer token', () => {
    const prepared = prepareAnthropic({ messages: [user('x')] }, { apiKey: 'sk-ant-1' });
    expect(prepared.url.href).toBe('https://api.anthropic.com/v1/messages');
    expect(prepared.headers).toEqual({
      'content-type': 'application/json',
      accept: 'application/json',
      'x-api-key': 'sk-ant-1',
      'anthropic-version': '2023-06-01',
    });
  });

  it("uses the client's anthropic-version and passes anthropic-beta through, also for pass-through", async () => {
    const requestHeaders = {
      'anthropic-version': '2024-01-01',
      'anthropic-beta': 'prompt-caching-2024-07-31,pdfs-2024-09-25',
      authorization: 'Bearer sk-ant-2',
    };
    const prepared = prepareAnthropic({ messages: [user('x')] }, { stream: true, requestHeaders, apiKey: 'sk-ant-2' });
    expect(prepared.headers).toMatchObject({
      accept: 'text/event-stream',
      'x-api-key': 'sk-ant-2',
      'anthropic-version': '2024-01-01',
      'anthropic-beta': 'prompt-caching-2024-07-31,pdfs-2024-09-25',
    });
    expect(prepared.headers).not.toHaveProperty('authorization');
    const target = { provider: anthropicProvider, baseUrl: anthropicProvider.baseUrl, settings: { api_key: 'sk-ant-3' } };
    const passThrough = await anthropicProvider.adapter.authenticate(
      { method: 'GET', url: new URL('https://api.anthropic.com/v1/models'), headers: {} },
      target,
    );
    expect(passThrough).toEqual({ 'x-api-key': 'sk-ant-3', 'anthropic-version': '2023-06-01' });
    const chosen = await anthropicProvider.adapter.authenticate(
      { method: 'POST', url: new URL('https://api.anthropic.com/v1/messages'), headers: { 'anthropic-version': '2024-01-01', 'anthropic-beta': 'b1' } },
      target,
    );
    expect(chosen).toEqual({ 'x-api-key': 'sk-ant-3', 'anthropic-version': '2024-01-01', 'anthropic-beta': 'b1' });
  });
});

describe('the fake Anthropic API rejects what Anthropic rejects', () => {
  it('flags bearer auth, unknown fields, broken alternation and unanswered tool_use', () => {
    const problems = checkMessagesRequest(
      { ...headers, authorization: 'Bearer k' },
      {
        model: 'm',
        max_tokens: 10,
        n: 1,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'text', text: 'no result' }] },
          { role: 'user', content: 'again' },
        ],
      },
    );
    expect(problems).toEqual([
      'authorization: the key must travel as x-api-key',
      'n: Extra inputs are not permitted',
      'messages.2: tool_use ids were found without tool_result blocks immediately after: t1',
      'messages.3: roles must alternate between "user" and "assistant"',
    ]);
    expect(checkMessagesRequest(headers, { model: 'm', messages: [{ role: 'system', content: 'x' }] })).toEqual([
      'max_tokens: Field required (a positive integer)',
      "messages.0.role: Input should be 'user' or 'assistant'",
    ]);
  });
});
