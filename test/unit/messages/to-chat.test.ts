import { describe, expect, it } from 'vitest';
import { checkMessagesRequest } from '../../../lib/providers/messages-format/request';
import { toChatRequest } from '../../../lib/providers/messages-format/to-chat';
import type { MessagesRequest } from '../../../lib/providers/messages-format/types';
import { thrownGatewayError } from '../../support/gateway-error';

const translated = { provider: 'openai', anthropicFields: false };
const claudeElsewhere = { provider: 'bedrock', anthropicFields: true };

const request = (fields: Partial<MessagesRequest>): MessagesRequest => ({
  model: 'm',
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Hello' }],
  ...fields,
});

describe('a Messages request as a chat request', () => {
  it('maps system, sampling, stop sequences, the user and max_tokens', () => {
    const chat = toChatRequest(
      request({
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        temperature: 0.3,
        top_p: 0.9,
        top_k: 5,
        stop_sequences: ['END'],
        metadata: { user_id: 'user-1' },
      }),
      translated,
    );
    expect(chat).toEqual({
      model: 'm',
      max_completion_tokens: 100,
      temperature: 0.3,
      top_p: 0.9,
      stop: ['END'],
      user: 'user-1',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: 'Hello' },
      ],
    });
    // top_k and prompt-caching marks reach only the adapters that read Anthropic's own fields.
    const claude = toChatRequest(request({ top_k: 5, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }] }), claudeElsewhere);
    expect(claude.top_k).toBe(5);
    expect(claude.messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }] });
  });

  it('turns images and documents into content parts', () => {
    const chat = toChatRequest(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' }, title: 'report.pdf' },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
            ],
          },
        ],
      }),
      translated,
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'report.pdf' } },
          { type: 'text', text: 'plain words' },
        ],
      },
    ]);
  });

  it('turns tool use into tool calls, tool results into tool messages before the rest of the turn', () => {
    const chat = toChatRequest(
      request({
        tools: [{ name: 'get_weather', description: 'Weather.', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Two cities.', signature: 'sig' },
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'Sunny' }] },
              {
                type: 'tool_result',
                tool_use_id: 'toolu_2',
                is_error: true,
                content: [
                  { type: 'text', text: 'No data' },
                  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'BBBB' } },
                ],
              },
              { type: 'text', text: 'Summarise.' },
            ],
          },
        ],
      }),
      translated,
    );
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather.', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(chat.parallel_tool_calls).toBe(false);
    expect(chat.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: No data' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/png;base64,BBBB' } },
          { type: 'text', text: 'Summarise.' },
        ],
      },
    ]);
  });

  it('keeps earlier thinking and the thinking budget for Claude elsewhere, an effort for other providers', () => {
    const thinking = request({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [
        { role: 'user', content: 'Hi' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Hmm.', signature: 'sig' },
            { type: 'text', text: 'Hello' },
          ],
        },
        { role: 'user', content: 'Again' },
      ],
    });
    const claude = toChatRequest(thinking, claudeElsewhere);
    expect(claude.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(claude.messages[1]).toEqual({ role: 'assistant', content: 'Hello', content_blocks: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig' }] });
    const other = toChatRequest(thinking, translated);
    expect(other.thinking).toBeUndefined();
    expect(other.reasoning_effort).toBe('low');
    expect(other.messages[1]).toEqual({ role: 'assistant', content: 'Hello' });
    expect(toChatRequest(request({ thinking: { type: 'enabled', budget_tokens: 30000 } }), translated).reasoning_effort).toBe('high');
    expect(toChatRequest(request({ tool_choice: { type: 'any' }, tools: [{ name: 't' }] }), translated).tool_choice).toBe('required');
  });

  it('refuses with a 400 what only Anthropic runs', () => {
    const serverTool = thrownGatewayError(() => toChatRequest(request({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }), translated));
    expect(serverTool).toMatchObject({ status: 400, param: 'tools.0', code: 'unsupported_parameter' });
    expect(serverTool.message).toContain('web_search_20250305');
    expect(thrownGatewayError(() => toChatRequest(request({ mcp_servers: [] }), translated))).toMatchObject({ status: 400, param: 'mcp_servers' });
    const fileDocument = thrownGatewayError(() =>
      toChatRequest(request({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_1' } }] }] }), translated),
    );
    expect(fileDocument).toMatchObject({ status: 400, param: 'messages.0.content.0.source' });
    const noSource = thrownGatewayError(() => toChatRequest(request({ messages: [{ role: 'user', content: [{ type: 'document' } as never] }] }), translated));
    expect(noSource).toMatchObject({ status: 400, param: 'messages.0.content.0.source' });
    const noToolId = thrownGatewayError(() =>
      toChatRequest(request({ messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' } as never] }] }), translated),
    );
    expect(noToolId).toMatchObject({ status: 400, param: 'messages.0.content.0.tool_use_id' });
  });
});

describe('the checks of a Messages body', () => {
  const check = (body: Record<string, unknown>) => thrownGatewayError(() => checkMessagesRequest(body));

  it('names the field of a malformed request with a 400', () => {
    expect(check({ max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })).toMatchObject({ status: 400, param: 'model' });
    expect(check({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })).toMatchObject({ status: 400, param: 'max_tokens' });
    expect(check({ model: 'm', max_tokens: 10, messages: [] })).toMatchObject({ status: 400, param: 'messages' });
    expect(check({ model: 'm', max_tokens: 10, messages: [{ role: 'system', content: 'hi' }] })).toMatchObject({ status: 400, param: 'messages.0.role' });
    expect(check({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: [{ text: 'no type' }] }] })).toMatchObject({
      status: 400,
      param: 'messages.0.content.0',
    });
    expect(check({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], system: 5 })).toMatchObject({ status: 400, param: 'system' });
    expect(check({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], tools: [{}] })).toMatchObject({ status: 400, param: 'tools.0' });
    expect(check({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: 'yes' })).toMatchObject({ status: 400, param: 'stream' });
  });
});
