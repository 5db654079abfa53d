import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../lib/core/errors';
import { validateInferenceBody } from '../../../lib/inference/validate';
import { responseFromChat } from '../../../lib/providers/responses-format/from-chat';
import { inputItems } from '../../../lib/responses/input-items';
import { baseResponse } from '../../../lib/providers/responses-format/response-object';
import { toChatRequest } from '../../../lib/providers/responses-format/to-chat';
import type { ConversationItem, ResponsesRequest } from '../../../lib/providers/responses-format/types';

const request = (fields: Partial<ResponsesRequest> = {}): ResponsesRequest => ({ model: 'gpt-4o-mini', input: 'Hello', ...fields });

/** The 400 a translation throws, as the caller sees it. */
function refusal(fields: Partial<ResponsesRequest>, history: ConversationItem[] = []) {
  try {
    toChatRequest(request(fields), history);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    const { status, param, code, message } = error as GatewayError;
    return { status, param, code, message };
  }
  throw new Error('expected a 400');
}

describe('toChatRequest: the conversation', () => {
  it('sends a string input as one user message, after the instructions as a system message', () => {
    expect(toChatRequest(request({ instructions: 'Be brief.' }), [])).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
    });
  });

  it('leaves out empty instructions', () => {
    expect(toChatRequest(request({ instructions: '' }), []).messages).toEqual([{ role: 'user', content: 'Hello' }]);
  });

  it('maps message items of every role, with or without their type', () => {
    const chat = toChatRequest(
      request({
        input: [
          { type: 'message', role: 'developer', content: 'Answer in French.' },
          { role: 'system', content: [{ type: 'input_text', text: 'Be brief.' }] } as ConversationItem,
          { type: 'message', role: 'user', content: 'Hi' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Bonjour', annotations: [] }] },
          { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'Non.' }] },
          { role: 'assistant', content: 'Salut' } as ConversationItem,
        ],
      }),
      [],
    );
    expect(chat.messages).toEqual([
      { role: 'developer', content: 'Answer in French.' },
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Bonjour' },
      { role: 'assistant', content: 'Non.' },
      { role: 'assistant', content: 'Salut' },
    ]);
  });

  it('maps user content parts: text, images by URL with detail, files by data or id', () => {
    const chat = toChatRequest(
      request({
        input: [
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'What is in these?' },
              { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
              { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
              { type: 'input_file', file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' },
              { type: 'input_file', file_id: 'file-abc' },
            ],
          },
        ],
      }),
      [],
    );
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
          { type: 'file', file: { file_id: 'file-abc' } },
        ],
      },
    ]);
  });

  it('joins an assistant message and the function calls after it into one assistant turn; outputs become tool messages', () => {
    const chat = toChatRequest(
      request({
        input: [
          { type: 'message', role: 'user', content: 'Weather in Paris and Rome?' },
          { type: 'reasoning', id: 'rs_1', summary: [] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
          { type: 'function_call_output', call_id: 'call_1', output: '18C' },
          {
            type: 'function_call_output',
            call_id: 'call_2',
            output: [
              { type: 'input_text', text: '2' },
              { type: 'input_text', text: '4C' },
            ],
          },
        ],
      }),
      [],
    );
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18C' },
      { role: 'tool', tool_call_id: 'call_2', content: '24C' },
    ]);
  });

  it('starts a new assistant turn for function calls that follow a tool result or a user message', () => {
    const chat = toChatRequest(
      request({
        input: [
          { type: 'message', role: 'user', content: 'Go' },
          { type: 'function_call', call_id: 'a', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'a', output: 'ok' },
          { type: 'function_call', call_id: 'b', name: 'g', arguments: '{}' },
        ],
      }),
      [],
    );
    expect(chat.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: 'ok' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'b', type: 'function', function: { name: 'g', arguments: '{}' } }] },
    ]);
  });

  it('puts the history of previous_response_id before the input, and only this request’s instructions', () => {
    const history: ConversationItem[] = [
      { type: 'message', id: 'msg_1', role: 'user', content: [{ type: 'input_text', text: 'Hi' }], status: 'completed' },
      { type: 'message', id: 'msg_2', role: 'assistant', content: [{ type: 'output_text', text: 'Hello!', annotations: [] }], status: 'completed' },
    ];
    expect(toChatRequest(request({ instructions: 'Now in French.', input: 'Again?' }), history).messages).toEqual([
      { role: 'system', content: 'Now in French.' },
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Again?' },
    ]);
  });

  it('carries a two-turn function-call conversation: the stored response, then its function_call_output', () => {
    const first = request({ input: 'Weather in Paris?', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }] });
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion' as const,
      created: 1,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant' as const,
            content: null,
            tool_calls: [{ id: 'call_9', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
          finish_reason: 'tool_calls' as const,
          logprobs: null,
        },
      ],
    };
    const response = responseFromChat(completion, baseResponse(first, { id: 'resp_1', createdAt: 1 }));
    const history = [...inputItems(first), ...response.output];

    const second = request({
      previous_response_id: 'resp_1',
      input: [{ type: 'function_call_output', call_id: 'call_9', output: '{"temp":18}' }],
      tools: first.tools,
    });
    const chat = toChatRequest(second, history);
    expect(chat.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_9', content: '{"temp":18}' },
    ]);
    expect(chat).not.toHaveProperty('previous_response_id');
    // What the core checks after the translation passes.
    expect(() => validateInferenceBody('chat', chat)).not.toThrow();
  });

  it('refuses a request with nothing to answer', () => {
    expect(refusal({ input: undefined, instructions: 'Be brief.' })).toMatchObject({ status: 400, param: 'input', code: 'missing_required_parameter' });
    expect(refusal({ input: [] })).toMatchObject({ status: 400, param: 'input' });
  });
});

describe('toChatRequest: what the chat format cannot carry', () => {
  it('refuses an image by file id, naming the part and asking for a URL or data URL', () => {
    const error = refusal({
      input: [
        { type: 'message', role: 'user', content: 'a' },
        { type: 'message', role: 'user', content: 'b' },
        { type: 'message', role: 'user', content: 'c' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', file_id: 'file-img' },
          ],
        },
      ],
    });
    expect(error).toMatchObject({ status: 400, param: 'input[3].content[1]', code: 'unsupported_content' });
    expect(error.message).toContain('input[3].content[1]');
    expect(error.message).toContain('image_url');
    expect(error.message).toContain('data URL');
  });

  it('refuses a file by URL and a file part with neither data nor id', () => {
    const input = (part: object) => [{ type: 'message', role: 'user', content: [{ type: 'input_file', ...part }] }] as ConversationItem[];
    expect(refusal({ input: input({ file_url: 'https://example.com/a.pdf' }) })).toMatchObject({
      param: 'input[0].content[0].file_url',
      code: 'unsupported_content',
    });
    expect(refusal({ input: input({}) })).toMatchObject({ param: 'input[0].content[0]', code: 'missing_required_parameter' });
  });

  it('refuses built-in tool call items, saying they need a provider with the Responses API', () => {
    const error = refusal({
      input: [
        { type: 'message', role: 'user', content: 'Search' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' } as unknown as ConversationItem,
      ],
    });
    expect(error).toMatchObject({ status: 400, param: 'input[1].type', code: 'unsupported_input_item' });
    expect(error.message).toContain('web_search_call');
    expect(error.message).toContain('natively');
  });

  it("leaves out a built-in tool's call in the history: the answer after it carries what it found", () => {
    const history = [
      { type: 'message', role: 'user', content: 'Search the news' },
      { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'news' } },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Here is the news.', annotations: [] }] },
    ] as unknown as ConversationItem[];
    const chat = toChatRequest({ model: 'm', input: 'Thanks' }, history);
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Search the news' },
      { role: 'assistant', content: 'Here is the news.' },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it('names previous_response_id for a malformed item of the history', () => {
    const error = refusal({}, [{ type: 'message', role: 'robot', content: 'Hi' } as unknown as ConversationItem]);
    expect(error).toMatchObject({ status: 400, param: 'previous_response_id', code: 'invalid_value' });
    expect(error.message).toContain('previous_response_id');
  });

  it('refuses malformed items, naming the field', () => {
    expect(refusal({ input: ['Hi'] as unknown as ConversationItem[] })).toMatchObject({ param: 'input[0]', code: 'invalid_type' });
    expect(refusal({ input: [{ content: 'Hi' }] as unknown as ConversationItem[] })).toMatchObject({
      param: 'input[0].type',
      code: 'missing_required_parameter',
    });
    expect(refusal({ input: [{ type: 'message', role: 'tool', content: 'x' }] as unknown as ConversationItem[] })).toMatchObject({
      param: 'input[0].role',
      code: 'invalid_value',
    });
    expect(refusal({ input: [{ type: 'message', role: 'user', content: 3 }] as unknown as ConversationItem[] })).toMatchObject({
      param: 'input[0].content',
      code: 'invalid_type',
    });
    expect(refusal({ input: [{ type: 'function_call', call_id: 'a', arguments: '{}' }] as unknown as ConversationItem[] })).toMatchObject({
      param: 'input[0].name',
      code: 'missing_required_parameter',
    });
    expect(refusal({ input: [{ type: 'function_call_output', call_id: 'a' }] as unknown as ConversationItem[] })).toMatchObject({
      param: 'input[0].output',
      code: 'invalid_type',
    });
  });

  it('refuses parts that do not belong where they stand', () => {
    const message = (role: string, part: object) => ({ input: [{ type: 'message', role, content: [part] }] as unknown as ConversationItem[] });
    expect(refusal(message('user', { type: 'output_text', text: 'x' }))).toMatchObject({ param: 'input[0].content[0].type', code: 'invalid_content' });
    expect(refusal(message('system', { type: 'input_image', image_url: 'https://x' }))).toMatchObject({
      param: 'input[0].content[0].type',
      code: 'unsupported_content',
    });
    expect(refusal(message('assistant', { type: 'input_image', image_url: 'https://x' }))).toMatchObject({
      param: 'input[0].content[0].type',
      code: 'invalid_content',
    });
    expect(
      refusal({ input: [{ type: 'function_call_output', call_id: 'a', output: [{ type: 'input_image', image_url: 'https://x' }] }] as ConversationItem[] }),
    ).toMatchObject({ param: 'input[0].output[0].type', code: 'unsupported_content' });
  });
});

describe('toChatRequest: tools', () => {
  it('sends function tools in the chat format’s nested form', () => {
    const chat = toChatRequest(
      request({
        tools: [
          { type: 'function', name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: {} }, strict: true },
          { type: 'function', name: 'ping', description: null, parameters: null, strict: null },
        ],
      }),
      [],
    );
    expect(chat.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: {} }, strict: true } },
      { type: 'function', function: { name: 'ping' } },
    ]);
  });

  it('leaves out an empty tools array', () => {
    expect(toChatRequest(request({ tools: [] }), [])).not.toHaveProperty('tools');
  });

  it.each(['web_search_preview', 'file_search', 'code_interpreter', 'computer_use_preview'])('refuses the built-in tool %s, naming it', (type) => {
    const error = refusal({ tools: [{ type: 'function', name: 'f' }, { type }] });
    expect(error).toMatchObject({ status: 400, param: 'tools[1].type', code: 'unsupported_tool' });
    expect(error.message).toContain(type);
    expect(error.message).toContain('openai or azure-openai');
  });

  it('refuses a function tool without a name', () => {
    expect(refusal({ tools: [{ type: 'function' } as never] })).toMatchObject({ param: 'tools[0].name', code: 'missing_required_parameter' });
  });

  it('maps tool_choice', () => {
    for (const choice of ['none', 'auto', 'required'] as const) expect(toChatRequest(request({ tool_choice: choice }), []).tool_choice).toBe(choice);
    expect(toChatRequest(request({ tool_choice: { type: 'function', name: 'get_weather' } }), []).tool_choice).toEqual({
      type: 'function',
      function: { name: 'get_weather' },
    });
    expect(refusal({ tool_choice: { type: 'file_search' } })).toMatchObject({ status: 400, param: 'tool_choice', code: 'invalid_tool_choice' });
    expect(refusal({ tool_choice: 'any' as never })).toMatchObject({ param: 'tool_choice', code: 'invalid_tool_choice' });
    expect(refusal({ tool_choice: { type: 'function' } as never })).toMatchObject({ param: 'tool_choice.name', code: 'missing_required_parameter' });
  });

  it('passes parallel_tool_calls only when given', () => {
    expect(toChatRequest(request({ parallel_tool_calls: false }), []).parallel_tool_calls).toBe(false);
    expect(toChatRequest(request(), [])).not.toHaveProperty('parallel_tool_calls');
  });
});

describe('toChatRequest: output format and parameters', () => {
  it('maps text.format', () => {
    expect(toChatRequest(request({ text: { format: { type: 'text' } } }), [])).not.toHaveProperty('response_format');
    expect(toChatRequest(request({ text: { format: { type: 'json_object' } } }), []).response_format).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    expect(
      toChatRequest(request({ text: { format: { type: 'json_schema', name: 'place', schema, strict: true, description: 'A place' } } }), []).response_format,
    ).toEqual({ type: 'json_schema', json_schema: { name: 'place', schema, strict: true, description: 'A place' } });
    expect(toChatRequest(request({ text: { format: { type: 'json_schema', name: 'place', schema } } }), []).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'place', schema },
    });
  });

  it('refuses a json_schema format without its name or schema, and unknown formats', () => {
    expect(refusal({ text: { format: { type: 'json_schema', schema: {} } as never } })).toMatchObject({
      param: 'text.format.name',
      code: 'missing_required_parameter',
    });
    expect(refusal({ text: { format: { type: 'json_schema', name: 'x' } as never } })).toMatchObject({
      param: 'text.format.schema',
      code: 'missing_required_parameter',
    });
    expect(refusal({ text: { format: { type: 'grammar' } as never } })).toMatchObject({ param: 'text.format.type', code: 'invalid_value' });
  });

  it('maps the sampling and reasoning parameters, and copies none of the Responses API’s own fields', () => {
    const chat = toChatRequest(
      request({
        max_output_tokens: 300,
        temperature: 0.2,
        top_p: 0.9,
        user: 'u-1',
        reasoning: { effort: 'low', summary: 'auto' },
        text: { verbosity: 'low' },
        metadata: { a: 'b' },
        store: true,
        include: ['reasoning.encrypted_content'],
        truncation: 'auto',
        background: false,
        previous_response_id: 'resp_1',
        stream: true,
      }),
      [],
    );
    expect(chat).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello' }],
      max_completion_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      user: 'u-1',
      reasoning_effort: 'low',
      verbosity: 'low',
    });
  });

  it('leaves out parameters given as null', () => {
    expect(toChatRequest(request({ temperature: null, top_p: null, user: null, max_output_tokens: null, reasoning: null, text: null }), [])).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hello' }],
    });
  });

  it('gives the core a body its chat checks accept', () => {
    const chat = toChatRequest(
      request({
        instructions: 'Be brief.',
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail: 'high' }] }],
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
        tool_choice: { type: 'function', name: 'f' },
        text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } } },
      }),
      [],
    );
    expect(() => validateInferenceBody('chat', chat)).not.toThrow();
  });
});
