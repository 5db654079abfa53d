import { badRequest } from '../../core/errors';
import type { ChatRequest } from '../openai-format/types';
import type { GenerateContentRequest } from './api';

type GeminiTools = Pick<GenerateContentRequest, 'tools' | 'toolConfig'>;

/**
 * OpenAI function tools as Gemini `functionDeclarations`. The JSON Schema goes in
 * `parametersJsonSchema` unchanged: Gemini accepts standard JSON Schema there (the recorded
 * `gemini_generatecontent_function_call_toolconfig` exchange sends `$schema` and
 * `additionalProperties` and gets a function call back), so nothing is lost to a conversion into the
 * OpenAPI-subset `parameters`. `strict` has no Gemini equivalent and is dropped; so is
 * `parallel_tool_calls` (Gemini decides how many calls to make).
 * @see https://ai.google.dev/api/caching#FunctionDeclaration
 */
export function prepareTools(request: ChatRequest): GeminiTools {
  const tools = request.tools;
  if (tools === undefined || tools === null) {
    if (request.tool_choice !== undefined && request.tool_choice !== 'none' && request.tool_choice !== 'auto') {
      throw badRequest('tool_choice needs tools.', 'tool_choice', 'invalid_tool_choice');
    }
    return {};
  }
  if (!Array.isArray(tools)) throw badRequest('tools must be an array of function tools.', 'tools', 'invalid_tools');
  if (tools.length === 0) return {};
  const functionDeclarations = tools.map((tool, index) => {
    if (tool?.type !== 'function' || typeof tool.function?.name !== 'string') {
      throw badRequest(
        `tools[${index}] must be {"type":"function","function":{"name",...}}; Gemini takes only function tools through this API.`,
        `tools[${index}]`,
        'invalid_tools',
      );
    }
    const { name, description, parameters } = tool.function;
    return { name, ...(description ? { description } : {}), ...(parameters ? { parametersJsonSchema: parameters } : {}) };
  });
  const result: GeminiTools = { tools: [{ functionDeclarations }] };
  const choice = request.tool_choice;
  if (choice === undefined || choice === null) return result;
  if (choice === 'auto') result.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (choice === 'required') result.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (choice === 'none') result.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (typeof choice === 'object' && typeof choice.function?.name === 'string') {
    if (!functionDeclarations.some((declaration) => declaration.name === choice.function.name)) {
      throw badRequest(`tool_choice names "${choice.function.name}", which is not in tools.`, 'tool_choice', 'invalid_tool_choice');
    }
    result.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  } else {
    throw badRequest('tool_choice must be "auto", "required", "none" or {"type":"function","function":{"name"}}.', 'tool_choice', 'invalid_tool_choice');
  }
  return result;
}
