import { badRequest } from '../../core/errors';
import type { ChatRequest, FunctionTool } from '../openai-format/types';
import type { ToolConfig, ToolSpec } from './api';

export interface ToolPlan {
  toolConfig?: ToolConfig;
  /** The tool forced to emulate `response_format`: its input is the answer, sent back as content. */
  responseTool?: string;
}

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;
const emptyObjectSchema = { type: 'object', properties: {} };

/**
 * `tools`, `tool_choice` and `response_format` → Converse `toolConfig`.
 * - tools → `toolSpec{name, description, inputSchema:{json}}`; `strict` is not sent (Converse has no
 *   such flag for every model) and `parallel_tool_calls` is dropped (no Converse field).
 * - tool_choice auto/required/named → `{auto:{}}`/`{any:{}}`/`{tool:{name}}`. Converse has no "none":
 *   the tools are left out instead — unless the conversation holds toolUse/toolResult blocks, for
 *   which Bedrock requires a toolConfig; then the tools stay and no choice is sent (the model may
 *   still call one; documented). With such blocks and no `tools` at all, minimal specs are made from
 *   the names in the history so earlier tool turns still validate.
 * - response_format json_schema/json_object → Bedrock has no JSON mode for all models, so it is
 *   emulated the documented way: one tool whose input schema is the wanted schema, forced with
 *   `toolChoice.tool`; its input is returned as the message content with finish_reason "stop".
 *   Combined with `tools` that would stop the model from calling them, so that is a 400.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolConfiguration.html
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use-inference-call.html (forcing a tool with toolChoice)
 */
export function prepareTools(body: ChatRequest, history: { hasToolBlocks: boolean; toolNames: Set<string> }): ToolPlan {
  const tools = body.tools ?? [];
  if (!Array.isArray(tools)) throw badRequest('tools must be an array of function tools.', 'tools', 'invalid_type');
  const specs = tools.map((tool, index) => toolSpec(tool, index));
  const choice = body.tool_choice;
  const format = body.response_format;

  if (format && (format.type === 'json_schema' || format.type === 'json_object')) {
    if (specs.length > 0) {
      throw badRequest(
        'response_format json_schema/json_object cannot be combined with tools on Bedrock: the gateway emulates it by forcing a tool, which would stop the model from calling yours.',
        'response_format',
        'unsupported_parameter_combination',
      );
    }
    const schema = format.type === 'json_schema' ? format.json_schema?.schema : undefined;
    const wanted =
      format.type === 'json_schema' && typeof format.json_schema?.name === 'string' ? format.json_schema.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) : '';
    const name = wanted || 'json_response';
    const description =
      (format.type === 'json_schema' && format.json_schema?.description) ||
      'Give the final answer by calling this tool with it as the input, as a JSON object.';
    const toolSpecs = [...historySpecs(history, specs), { toolSpec: { name, description, inputSchema: { json: schema ?? { type: 'object' } } } }];
    return { toolConfig: { tools: toolSpecs, toolChoice: { tool: { name } } }, responseTool: name };
  }

  if (choice === 'none' || specs.length === 0) {
    if (choice !== undefined && choice !== 'auto' && choice !== 'none') {
      throw badRequest('tool_choice needs tools: send the functions the model may call in tools.', 'tool_choice', 'missing_required_parameter');
    }
    const kept = history.hasToolBlocks ? historySpecs(history, specs) : [];
    return kept.length ? { toolConfig: { tools: kept } } : {};
  }
  const toolConfig: ToolConfig = { tools: specs };
  if (choice === 'auto') toolConfig.toolChoice = { auto: {} };
  else if (choice === 'required') toolConfig.toolChoice = { any: {} };
  else if (choice && typeof choice === 'object') {
    const name = choice.function?.name;
    if (!specs.some((spec) => spec.toolSpec.name === name)) {
      throw badRequest(`tool_choice names the function "${name}", which is not in tools.`, 'tool_choice.function.name', 'invalid_tool_choice');
    }
    toolConfig.toolChoice = { tool: { name: name! } };
  } else if (choice !== undefined) {
    throw badRequest('tool_choice must be "none", "auto", "required" or {"type":"function","function":{"name":…}}.', 'tool_choice', 'invalid_tool_choice');
  }
  return { toolConfig };
}

function toolSpec(tool: FunctionTool, index: number): { toolSpec: ToolSpec } {
  const where = `tools[${index}]`;
  if (tool?.type !== 'function' || typeof tool.function?.name !== 'string') {
    throw badRequest(`${where} must be {"type":"function","function":{"name":…}}; Bedrock supports only function tools.`, where, 'unsupported_tool_type');
  }
  if (!toolNamePattern.test(tool.function.name)) {
    throw badRequest(
      `${where}.function.name must be 1-64 letters, digits, underscores or hyphens for Bedrock; got "${tool.function.name.slice(0, 80)}".`,
      `${where}.function.name`,
      'invalid_tool_name',
    );
  }
  const spec: ToolSpec = { name: tool.function.name, inputSchema: { json: tool.function.parameters ?? emptyObjectSchema } };
  if (tool.function.description) spec.description = tool.function.description;
  return { toolSpec: spec };
}

/** The client's specs, or (when it sent none) minimal ones for the tools the history used. */
function historySpecs(history: { toolNames: Set<string> }, specs: Array<{ toolSpec: ToolSpec }>): Array<{ toolSpec: ToolSpec }> {
  if (specs.length > 0) return specs;
  return [...history.toolNames].map((name) => ({
    toolSpec: { name, description: 'A tool used earlier in this conversation.', inputSchema: { json: emptyObjectSchema } },
  }));
}
