/**
 * The inference routes, described by hand: they take OpenAI's bodies and pass the fields they do
 * not read to the provider unchanged, so a schema lists what the gateway reads or translates and
 * leaves the rest open (`additionalProperties`). OpenAI's API reference stays the full account.
 */
import type { JsonSchema } from './json-schema';
import { errorResponses, jsonAnswer, type Operation, type Parameter } from './shared';

/** The headers that steer an inference request (docs/headers.md), shared by every inference operation. */
export const inferenceHeaders: Record<string, Parameter> = {
  provider: header('x-gateway-provider', 'The provider (`openai`, `anthropic`, …) or a catalog entry (`@slug`).'),
  virtualKey: header('x-gateway-virtual-key', "A catalog entry's slug: its provider, key and host."),
  config: header('x-gateway-config', 'A config: inline JSON, or a saved config id (`cfg_…`, optionally `@version`).'),
  customHost: header('x-gateway-custom-host', "The provider's base URL, for a self-hosted or proxied provider."),
  metadata: header('x-gateway-metadata', 'A JSON object of string values, kept with the request log.'),
  traceId: header('x-gateway-trace-id', 'Groups requests into one trace in the logs; echoed on the answer.'),
  spanId: header('x-gateway-span-id', "This request's span in the trace."),
  parentSpanId: header('x-gateway-parent-span-id', "The parent span's id."),
  spanName: header('x-gateway-span-name', "The span's name."),
  requestTimeout: header('x-gateway-request-timeout', 'Milliseconds an attempt may take before the next target is tried.'),
  cacheNamespace: header('x-gateway-cache-namespace', 'Partitions cached answers (with a config that caches).'),
  cacheForceRefresh: header('x-gateway-cache-force-refresh', '`true` skips the cached answer and stores a fresh one.'),
  forwardHeaders: header('x-gateway-forward-headers', 'Comma-separated request headers passed on to the provider.'),
  strictApiCompliance: header('x-gateway-strict-api-compliance', '`true` drops fields that are not OpenAI’s from answers.'),
};

const headerRefs = Object.keys(inferenceHeaders).map((name) => ({ $ref: `#/components/parameters/${name}` }));

const message: JsonSchema = {
  type: 'object',
  required: ['role'],
  properties: {
    role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
    content: { description: 'Text, or an array of content parts (text, image_url, input_audio, file).', type: ['string', 'array', 'null'] },
    name: { type: 'string' },
    tool_calls: { type: 'array', items: { type: 'object' } },
    tool_call_id: { type: 'string' },
  },
  additionalProperties: true,
};

const sampling: Record<string, JsonSchema> = {
  temperature: { type: 'number' },
  top_p: { type: 'number' },
  max_tokens: { type: 'integer' },
  stop: { type: ['string', 'array'], items: { type: 'string' } },
  seed: { type: 'integer' },
  presence_penalty: { type: 'number' },
  frequency_penalty: { type: 'number' },
  user: { type: 'string' },
};

const streaming: Record<string, JsonSchema> = {
  stream: { type: 'boolean', description: 'Answer as server-sent events.' },
  stream_options: { type: 'object', properties: { include_usage: { type: 'boolean' } } },
};

const chatBody: JsonSchema = {
  type: 'object',
  required: ['messages'],
  properties: {
    model: { type: 'string', description: 'Required unless a config or a catalog entry gives it.' },
    messages: { type: 'array', minItems: 1, items: message },
    ...streaming,
    ...sampling,
    max_completion_tokens: { type: 'integer' },
    n: { type: 'integer' },
    tools: { type: 'array', items: { type: 'object', properties: { type: { const: 'function' }, function: { type: 'object' } } } },
    tool_choice: { type: ['string', 'object'] },
    parallel_tool_calls: { type: 'boolean' },
    response_format: { type: 'object', properties: { type: { type: 'string', enum: ['text', 'json_object', 'json_schema'] } } },
    logprobs: { type: 'boolean' },
    top_logprobs: { type: 'integer' },
    reasoning_effort: { type: 'string' },
  },
  additionalProperties: true,
};

const completionBody: JsonSchema = {
  type: 'object',
  required: ['prompt'],
  properties: {
    model: { type: 'string' },
    prompt: { type: ['string', 'array'] },
    suffix: { type: 'string' },
    echo: { type: 'boolean' },
    ...streaming,
    ...sampling,
  },
  additionalProperties: true,
};

const embeddingBody: JsonSchema = {
  type: 'object',
  required: ['input'],
  properties: {
    model: { type: 'string' },
    input: {
      description: 'A text, a list of texts, or token arrays.',
      anyOf: [
        { type: 'string' },
        { type: 'array', items: { type: 'string' } },
        { type: 'array', items: { type: 'integer' } },
        { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
      ],
    },
    encoding_format: { type: 'string', enum: ['float', 'base64'] },
    dimensions: { type: 'integer' },
    user: { type: 'string' },
  },
  additionalProperties: true,
};

const responseBody: JsonSchema = {
  type: 'object',
  required: ['input'],
  properties: {
    model: { type: 'string' },
    input: { description: 'A text, or a list of input items (messages, function call outputs, …).', type: ['string', 'array'] },
    instructions: { type: 'string' },
    previous_response_id: { type: 'string', description: 'A stored response of this workspace to continue from.' },
    store: { type: 'boolean', description: 'Keep the response for GET /v1/responses/{responseId} (default true).' },
    background: { type: 'boolean', description: 'Answer at once with a queued response that a worker completes.' },
    stream: { type: 'boolean' },
    tools: { type: 'array', items: { type: 'object' } },
    tool_choice: { type: ['string', 'object'] },
    parallel_tool_calls: { type: 'boolean' },
    temperature: { type: 'number' },
    top_p: { type: 'number' },
    max_output_tokens: { type: 'integer' },
    text: { type: 'object' },
    reasoning: { type: 'object' },
    truncation: { type: 'string', enum: ['auto', 'disabled'] },
    include: { type: 'array', items: { type: 'string' } },
    metadata: { type: 'object', additionalProperties: { type: 'string' } },
    user: { type: 'string' },
  },
  additionalProperties: true,
};

const promptRunBody: JsonSchema = {
  type: 'object',
  properties: {
    variables: { type: 'object', description: "The values the prompt's template uses." },
    stream: { type: 'boolean' },
  },
  description: 'Hyperparameters (temperature, max_tokens, …) go next to `variables` and override the saved ones.',
  additionalProperties: true,
};

const messagesBody: JsonSchema = {
  type: 'object',
  required: ['model', 'max_tokens', 'messages'],
  properties: {
    model: { type: 'string' },
    max_tokens: { type: 'integer' },
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['role', 'content'],
        properties: { role: { type: 'string', enum: ['user', 'assistant'] }, content: { type: ['string', 'array'] } },
      },
    },
    system: { type: ['string', 'array'] },
    stream: { type: 'boolean' },
    stop_sequences: { type: 'array', items: { type: 'string' } },
    temperature: { type: 'number' },
    top_p: { type: 'number' },
    top_k: { type: 'integer' },
    tools: { type: 'array', items: { type: 'object' } },
    tool_choice: { type: 'object' },
    thinking: { type: 'object', description: '`{type: "enabled", budget_tokens}`.' },
    metadata: { type: 'object' },
  },
  additionalProperties: true,
};

const countTokensBody: JsonSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string' },
    messages: { type: 'array', items: { type: 'object' } },
    system: { type: ['string', 'array'] },
    tools: { type: 'array' },
  },
  additionalProperties: true,
};

const eventStream = { 'text/event-stream': { schema: { type: 'string', description: 'Server-sent events, ending with `data: [DONE]`.' } } };

/** `METHOD path` → operation, for the routes no defineRoute describes. */
export const inferenceOperations: Record<string, Operation> = {
  'POST /v1/chat/completions': inference(
    'createChatCompletion',
    'chat',
    'A chat completion in OpenAI’s format, from whichever provider the request selects.',
    chatBody,
    true,
  ),
  'POST /v1/completions': inference('createCompletion', 'completions', 'A legacy text completion.', completionBody, true),
  'POST /v1/embeddings': inference('createEmbedding', 'embeddings', 'Embeddings of the input.', embeddingBody, false),
  'POST /v1/responses': inference(
    'createResponse',
    'responses',
    'OpenAI’s Responses API, translated to chat completions for providers without it.',
    responseBody,
    true,
  ),
  'POST /v1/messages': inference(
    'createMessage',
    'messages',
    'Anthropic’s Messages API (answers and errors in its shapes), native at Anthropic and translated for other providers.',
    messagesBody,
    true,
    'Anthropic’s',
  ),
  'POST /v1/messages/count_tokens': inference(
    'countMessageTokens',
    'messages',
    'The input tokens of a Messages request, counted by Anthropic (a 404 for other providers).',
    countTokensBody,
    false,
    'Anthropic’s',
  ),
  'POST /v1/prompts/{promptId}/completions': {
    ...inference('runPrompt', 'prompts', 'Renders a saved prompt with `variables` and runs it as a chat completion.', promptRunBody, true),
    parameters: [
      { name: 'promptId', in: 'path', required: true, description: 'An id or slug, optionally `@version` or `@latest`.', schema: { type: 'string' } },
      ...headerRefs,
    ],
  },
};

function inference(operationId: string, tag: string, summary: string, body: JsonSchema, streams: boolean, format = 'OpenAI’s'): Operation {
  const answer = jsonAnswer(`The provider’s answer in ${format} format; \`x-gateway-trace-id\` names its log.`);
  return {
    operationId,
    tags: [tag],
    summary,
    'x-gateway-role': 'member',
    parameters: headerRefs,
    requestBody: { required: true, content: { 'application/json': { schema: body } } },
    responses: {
      '200': streams ? { ...answer, content: { ...answer.content, ...eventStream } } : answer,
      ...errorResponses('member'),
      '429': { $ref: '#/components/responses/Error' },
    },
  };
}

function header(name: string, description: string): Parameter {
  return { name, in: 'header', required: false, description, schema: { type: 'string' } };
}
