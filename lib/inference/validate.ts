import { badRequest } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { checkMessagesRequest } from '../providers/messages-format/request';
import { checkResponsesRequest } from '../providers/responses-format/request';
import type { Operation } from '../providers/types';

/**
 * The fields a unified route cannot do without, and the shape of the OpenAI chat fields the
 * adapters translate into other providers' formats (as OpenAI's own API checks them), so a malformed
 * one is a 400 that names it rather than a failed translation. Everything else is the provider's to
 * judge, so new provider parameters pass through untouched.
 */
export function validateInferenceBody(operation: Operation, body: Record<string, unknown>): void {
  if (body.model !== undefined && body.model !== null && typeof body.model !== 'string') {
    throw badRequest(`model must be a string naming the model, for example "gpt-4o-mini"; got ${typeName(body.model)}.`, 'model', 'invalid_type');
  }
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw badRequest('model is required: the name of the model to call, for example "gpt-4o-mini".', 'model', 'missing_required_parameter');
  }
  if (operation === 'chat') {
    if (body.messages !== undefined && body.messages !== null && !Array.isArray(body.messages)) {
      throw badRequest(
        `messages must be an array of messages such as [{"role":"user","content":"Hello"}]; got ${typeName(body.messages)}.`,
        'messages',
        'invalid_type',
      );
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      throw badRequest('messages is required: a non-empty array such as [{"role":"user","content":"Hello"}].', 'messages', 'missing_required_parameter');
    }
    body.messages.forEach((message, index) => {
      if (!isPlainObject(message) || typeof message.role !== 'string') {
        throw badRequest(`messages[${index}] must be an object with a role.`, `messages[${index}]`, 'invalid_message');
      }
      checkMessage(message, `messages[${index}]`);
    });
    checkChatFields(body);
  } else if (operation === 'responses') {
    checkResponsesRequest(body);
  } else if (operation === 'messages') {
    checkMessagesRequest(body);
  } else if (operation === 'completions') {
    if (body.prompt === undefined || body.prompt === null) throw badRequest('prompt is required.', 'prompt', 'missing_required_parameter');
  } else if (body.input === undefined || body.input === null) {
    throw badRequest('input is required: a string or an array of strings to embed.', 'input', 'missing_required_parameter');
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw badRequest('stream must be a boolean.', 'stream', 'invalid_type');
  }
  if (operation === 'embeddings' && body.stream === true) throw badRequest('Embeddings cannot be streamed.', 'stream', 'invalid_type');
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

// ---- the chat fields adapters translate

type Check = (value: unknown, param: string) => void;

const absent = (value: unknown) => value === undefined || value === null;

function invalid(param: string, expected: string, value: unknown): never {
  throw badRequest(`${param} must be ${expected}; got ${typeName(value)}.`, param, 'invalid_type');
}

const optionalString: Check = (value, param) => {
  if (!absent(value) && typeof value !== 'string') invalid(param, 'a string', value);
};
const optionalNumber: Check = (value, param) => {
  if (!absent(value) && typeof value !== 'number') invalid(param, 'a number', value);
};
const optionalObject: Check = (value, param) => {
  if (!absent(value) && !isPlainObject(value)) invalid(param, 'an object', value);
};

/** An object whose listed fields pass their checks (`required` ones must be present). */
function checkObject(
  value: unknown,
  param: string,
  expected: string,
  fields: Record<string, Check>,
  required: readonly string[] = [],
): asserts value is Record<string, unknown> {
  if (!isPlainObject(value)) invalid(param, expected, value);
  for (const name of required)
    if (absent(value[name])) throw badRequest(`${param}.${name} is required in ${expected}.`, `${param}.${name}`, 'missing_required_parameter');
  for (const name in fields) fields[name]!(value[name], `${param}.${name}`);
}

function optionalArrayOf(expected: string, item: Check): Check {
  return (value, param) => {
    if (absent(value)) return;
    if (!Array.isArray(value)) invalid(param, expected, value);
    value.forEach((entry, index) => item(entry, `${param}[${index}]`));
  };
}

const contentPartExample = 'a content part such as {"type":"text","text":"Hello"}';
/** The parts whose fields adapters read: every listed field is required. */
const contentParts: Record<string, Record<string, Check>> = {
  text: { text: optionalString },
  image_url: {
    image_url: (value, param) => checkObject(value, param, 'an object such as {"url":"https://…"}', { url: optionalString, detail: optionalString }, ['url']),
  },
  input_audio: {
    input_audio: (value, param) =>
      checkObject(value, param, 'an object such as {"data":"<base64>","format":"wav"}', { data: optionalString, format: optionalString }, ['data']),
  },
  file: {
    file: (value, param) =>
      checkObject(value, param, 'an object with file_data or file_id', { file_data: optionalString, file_id: optionalString, filename: optionalString }),
  },
};
const contentPart: Check = (value, param) => {
  checkObject(value, param, contentPartExample, { type: optionalString }, ['type']);
  // Other part types are the provider's to judge.
  const kind = value.type as string;
  if (Object.hasOwn(contentParts, kind)) checkObject(value, param, contentPartExample, contentParts[kind]!, contentPartFields[kind]);
};
const contentPartFields: Record<string, readonly string[]> = Object.fromEntries(
  Object.entries(contentParts).map(([kind, fields]) => [kind, Object.keys(fields)]),
);
const contentPartList = optionalArrayOf('a string or an array of content parts such as [{"type":"text","text":"Hello"}]', contentPart);
const content: Check = (value, param) => {
  if (typeof value !== 'string') contentPartList(value, param);
};

const toolCallExample = 'a tool call such as {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}';
const toolCall: Check = (value, param) =>
  checkObject(
    value,
    param,
    toolCallExample,
    {
      id: optionalString,
      type: optionalString,
      function: (fn, at) =>
        checkObject(fn, at, 'an object with name and arguments (a JSON string)', { name: optionalString, arguments: optionalString }, ['name']),
    },
    ['function'],
  );

const toolCalls = optionalArrayOf(`an array of tool calls, each ${toolCallExample}`, toolCall);

function checkMessage(message: Record<string, unknown>, param: string): void {
  content(message.content, `${param}.content`);
  toolCalls(message.tool_calls, `${param}.tool_calls`);
  optionalString(message.tool_call_id, `${param}.tool_call_id`);
  optionalString(message.name, `${param}.name`);
}

const toolExample = 'a tool such as {"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}';
const tool: Check = (value, param) => {
  checkObject(value, param, toolExample, { type: optionalString });
  if (value.type === undefined || value.type === 'function') {
    checkObject(
      value.function,
      `${param}.function`,
      'an object with a name, and optional description and parameters (a JSON Schema object)',
      { name: optionalString, description: optionalString, parameters: optionalObject },
      ['name'],
    );
  }
};

const stopList = optionalArrayOf('a string or an array of strings', optionalString);

const chatFields: Record<string, Check> = {
  tools: optionalArrayOf(`an array of tools, each ${toolExample}`, tool),
  tool_choice: (value, param) => {
    if (absent(value) || typeof value === 'string') return;
    checkObject(value, param, '"auto", "none", "required" or {"type":"function","function":{"name":"…"}}', { type: optionalString, function: optionalObject });
    if (isPlainObject(value.function)) optionalString(value.function.name, `${param}.function.name`);
  },
  stop: (value, param) => {
    if (typeof value !== 'string') stopList(value, param);
  },
  response_format: (value, param) => {
    if (absent(value)) return;
    checkObject(value, param, 'an object such as {"type":"json_object"}', { type: optionalString, json_schema: optionalObject }, ['type']);
    if (isPlainObject(value.json_schema)) optionalObject(value.json_schema.schema, `${param}.json_schema.schema`);
  },
  stream_options: optionalObject,
  thinking: optionalObject,
  reasoning_effort: optionalString,
  user: optionalString,
  max_tokens: optionalNumber,
  max_completion_tokens: optionalNumber,
  temperature: optionalNumber,
  top_p: optionalNumber,
  n: optionalNumber,
  seed: optionalNumber,
  presence_penalty: optionalNumber,
  frequency_penalty: optionalNumber,
};

function checkChatFields(body: Record<string, unknown>): void {
  for (const name in chatFields) chatFields[name]!(body[name], name);
}
