import { badRequest } from '../../core/errors';
import type { ChatRequest, FunctionTool, ResponseFormat } from '../openai-format/types';
import type { ToolChoice, ToolDefinition } from './api';

export interface PreparedTools {
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  /** The tool whose input is the answer when `response_format` asks for JSON. */
  jsonTool?: string;
}

/**
 * OpenAI `tools`, `tool_choice`, `parallel_tool_calls` and `response_format` as Anthropic tools.
 *
 * - `{type:'function', function:{name, description, parameters}}` → `{name, description, input_schema}`;
 *   a function without parameters gets an empty object schema (Anthropic requires one). `strict` is
 *   not sent: Anthropic's strict tool use is a newer option that older models reject.
 * - `tool_choice` auto → auto, required → any, none → none, a named function → `{type:'tool', name}`.
 * - `parallel_tool_calls: false` → `disable_parallel_tool_use: true` on the tool choice.
 * - `response_format` json_schema / json_object: Anthropic has no JSON mode that every Claude model
 *   supports, so the answer is requested as the input of one forced tool whose input schema is the
 *   requested schema (any object for json_object); the response mapping turns that tool call back
 *   into the message content. This cannot be combined with the client's own tools or with thinking
 *   (Anthropic does not allow a forced tool while thinking), so those combinations are a 400.
 * @see https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use
 */
export function prepareTools(request: ChatRequest): PreparedTools {
  const tools = request.tools ?? [];
  if (!Array.isArray(tools)) throw badRequest('tools must be an array of function tools.', 'tools', 'invalid_tools');
  const json = jsonResponseTool(request.response_format, tools.length > 0, isThinking(request));
  if (json) return json;
  if (tools.length === 0) {
    const choice = request.tool_choice;
    if (choice !== undefined && choice !== null && choice !== 'none' && choice !== 'auto') {
      throw badRequest('tool_choice asks for a tool call but no tools were sent.', 'tool_choice', 'invalid_tool_choice');
    }
    return {};
  }
  const prepared: PreparedTools = { tools: tools.map(toolDefinition) };
  const choice = toolChoice(request.tool_choice, request.parallel_tool_calls === false);
  if (choice) prepared.tool_choice = choice;
  return prepared;
}

function toolDefinition(tool: FunctionTool, index: number): ToolDefinition {
  if (tool?.type !== 'function' || typeof tool.function?.name !== 'string' || !tool.function.name) {
    throw badRequest(
      `tools[${index}] must be {"type":"function","function":{"name",…}}; anthropic takes function tools only.`,
      `tools[${index}]`,
      'invalid_tools',
    );
  }
  const definition: ToolDefinition = { name: tool.function.name, input_schema: tool.function.parameters ?? { type: 'object', properties: {} } };
  if (tool.function.description) definition.description = tool.function.description;
  return definition;
}

function toolChoice(choice: ChatRequest['tool_choice'], disableParallel: boolean): ToolChoice | undefined {
  const parallel = disableParallel ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined || choice === null) return disableParallel ? { type: 'auto', ...parallel } : undefined;
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'required') return { type: 'any', ...parallel };
  if (choice === 'none') return { type: 'none' };
  if (typeof choice === 'object' && choice.type === 'function' && typeof choice.function?.name === 'string') {
    return { type: 'tool', name: choice.function.name, ...parallel };
  }
  throw badRequest('tool_choice must be "none", "auto", "required" or {"type":"function","function":{"name"}}.', 'tool_choice', 'invalid_tool_choice');
}

function isThinking(request: ChatRequest): boolean {
  return request.thinking != null && request.thinking.type !== 'disabled';
}

/** A JSON answer as one forced tool call (see prepareTools). */
function jsonResponseTool(format: ResponseFormat | undefined, hasTools: boolean, thinking: boolean): PreparedTools | undefined {
  if (format == null || format.type === 'text') return undefined;
  if (format.type !== 'json_object' && format.type !== 'json_schema') {
    throw badRequest(
      `response_format.type must be text, json_object or json_schema; got "${(format as { type?: string }).type}".`,
      'response_format',
      'invalid_response_format',
    );
  }
  if (hasTools || thinking) {
    throw badRequest(
      `response_format ${format.type} cannot be combined with ${hasTools ? 'tools' : 'thinking'} for anthropic: the gateway asks Claude for JSON through a forced tool call, which ${hasTools ? 'would replace your tools' : 'Anthropic does not allow while thinking'}.`,
      'response_format',
      'unsupported_parameter',
    );
  }
  let tool: ToolDefinition;
  if (format.type === 'json_schema') {
    const spec = format.json_schema;
    if (typeof spec?.name !== 'string' || !spec.name)
      throw badRequest('response_format.json_schema.name is required.', 'response_format.json_schema.name', 'invalid_response_format');
    tool = {
      name: spec.name,
      description: spec.description ?? `Give your answer as the input of this tool, following the ${spec.name} schema.`,
      input_schema: spec.schema ?? { type: 'object' },
    };
  } else {
    tool = { name: 'json_object', description: 'Give your answer as a JSON object: the input of this tool.', input_schema: { type: 'object' } };
  }
  return { tools: [tool], tool_choice: { type: 'tool', name: tool.name }, jsonTool: tool.name };
}
