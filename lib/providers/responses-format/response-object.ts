/**
 * The response object before its answer: every request field echoed as OpenAI's API echoes it, the
 * gateway's id and time, no output yet. The translation (from-chat.ts, stream.ts) fills in the rest.
 */
import type { OutputItem, ResponseObject, ResponsesRequest } from './types';

export function baseResponse(request: ResponsesRequest, fields: { id: string; createdAt: number; status?: ResponseObject['status'] }): ResponseObject {
  return {
    id: fields.id,
    object: 'response',
    created_at: fields.createdAt,
    status: fields.status ?? 'in_progress',
    background: request.background === true,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: request.model,
    output: [],
    output_text: '',
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: request.store !== false,
    temperature: request.temperature ?? 1,
    text: { format: request.text?.format ?? { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

/** The text of every output_text part of the output, joined, as the SDKs compute `output_text`. */
export function outputText(output: readonly OutputItem[]): string {
  let text = '';
  for (const item of output) {
    if (item.type !== 'message') continue;
    for (const part of item.content) if (part.type === 'output_text') text += part.text;
  }
  return text;
}
