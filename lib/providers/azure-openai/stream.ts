/**
 * Azure OpenAI starts a stream with a chunk that has no id, model or choices, only the content
 * filter results for the prompt (`prompt_filter_results`), with `created: 0`. Clients that take the
 * id and model from the first chunk (the openai SDK's stream helpers) would get empty ones, so that
 * chunk is not relayed: its `prompt_filter_results` ride on the next chunk that has choices.
 * Per-choice `content_filter_results` and `finish_reason: "content_filter"` are OpenAI-shaped
 * already and pass as they are.
 * @see https://learn.microsoft.com/azure/ai-services/openai/concepts/content-filter#streaming
 */
export function promptFilterHook(): (data: string) => string | undefined {
  let held: unknown[] | undefined;
  return (data) => {
    // Only the leading chunk and the one after it are ever parsed.
    if (held === undefined && !data.includes('"prompt_filter_results"') && !data.includes('"choices":[]')) return data;
    let chunk: { choices?: unknown[]; usage?: unknown; prompt_filter_results?: unknown[] };
    try {
      chunk = JSON.parse(data);
    } catch {
      return data;
    }
    if (Array.isArray(chunk.choices) && chunk.choices.length === 0 && chunk.usage == null) {
      if (Array.isArray(chunk.prompt_filter_results)) held = [...(held ?? []), ...chunk.prompt_filter_results];
      return undefined;
    }
    if (held === undefined) return data;
    chunk.prompt_filter_results = [...held, ...(chunk.prompt_filter_results ?? [])];
    held = undefined;
    return JSON.stringify(chunk);
  };
}
