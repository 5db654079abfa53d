// Helpers for the end-to-end tests that drive the gateway with the official openai client.
import type { ChatCompletionChunk, ChatCompletionFunctionTool } from 'openai/resources/chat/completions';

type FinishReason = NonNullable<ChatCompletionChunk.Choice['finish_reason']>;
type ToolCallDelta = ChatCompletionChunk.Choice.Delta.ToolCall;

export interface WeatherToolOptions {
  /** The one string parameter: `location` unless a test asks for another name (`city`). */
  parameter?: string;
  /** The function's description; `null` leaves it out. */
  description?: string | null;
  /** Whether the parameter is listed in `required`. */
  required?: boolean;
  /** Set to add `additionalProperties` to the parameters schema. */
  additionalProperties?: boolean;
}

/** An OpenAI function tool `get_weather` with a single string parameter. */
export function makeWeatherTool({
  parameter = 'location',
  description = 'Current weather',
  required = true,
  additionalProperties,
}: WeatherToolOptions = {}): ChatCompletionFunctionTool {
  const parameters: Record<string, unknown> = { type: 'object', properties: { [parameter]: { type: 'string' } } };
  if (required) parameters.required = [parameter];
  if (additionalProperties !== undefined) parameters.additionalProperties = additionalProperties;
  return { type: 'function', function: { name: 'get_weather', ...(description === null ? {} : { description }), parameters } };
}

/** `get_weather(location)`, described as "Current weather", its parameter required. */
export const weatherTool = makeWeatherTool();

/** One tool call put together from its deltas. */
export interface AssembledToolCall {
  index: number;
  /** The id and name of the call's first delta that carries them ('' when none did). */
  id: string;
  name: string;
  /** Every argument fragment of the call, joined. */
  arguments: string;
}

export interface CollectedChunks {
  chunks: ChatCompletionChunk[];
  /** The first choice's content deltas, joined. */
  text: string;
  /** The first choice's tool-call deltas, flattened in arrival order. */
  toolCalls: ToolCallDelta[];
  /** The argument fragments of the tool call at `index`, joined. */
  toolArguments(index?: number): string;
  /** The tool calls assembled by index, in order of first appearance. */
  assembledToolCalls: AssembledToolCall[];
  /** The first choice's first non-null finish_reason. */
  finishReason: FinishReason | undefined;
  /** Every non-null finish_reason of the first choice, in order. */
  finishReasons: FinishReason[];
  /** The last chunk. */
  last: ChatCompletionChunk | undefined;
}

/** What the chunks streamed so far say. */
export function summarizeChunks(chunks: ChatCompletionChunk[]): CollectedChunks {
  const toolCalls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
  const toolArguments = (index = 0) =>
    toolCalls
      .filter((call) => call.index === index)
      .map((call) => call.function?.arguments ?? '')
      .join('');
  const assembled = new Map<number, AssembledToolCall>();
  for (const call of toolCalls) {
    const entry = assembled.get(call.index) ?? { index: call.index, id: '', name: '', arguments: '' };
    if (!entry.id && call.id) entry.id = call.id;
    if (!entry.name && call.function?.name) entry.name = call.function.name;
    entry.arguments += call.function?.arguments ?? '';
    assembled.set(call.index, entry);
  }
  const finishReasons = chunks.flatMap((chunk) => {
    const reason = chunk.choices[0]?.finish_reason;
    return reason ? [reason] : [];
  });
  return {
    chunks,
    text: chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''),
    toolCalls,
    toolArguments,
    assembledToolCalls: [...assembled.values()],
    finishReason: finishReasons[0],
    finishReasons,
    last: chunks.at(-1),
  };
}

/** Reads a streamed chat completion to its end. */
export async function collectChunks(stream: AsyncIterable<ChatCompletionChunk>): Promise<CollectedChunks> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return summarizeChunks(chunks);
}

/** Reads a streamed chat completion until it ends or fails; `error` is what it failed with (undefined if it did not). */
export async function collectChunksUntilError(stream: AsyncIterable<ChatCompletionChunk>): Promise<CollectedChunks & { error: unknown }> {
  const chunks: ChatCompletionChunk[] = [];
  let error: unknown;
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (caught) {
    error = caught;
  }
  return { ...summarizeChunks(chunks), error };
}
