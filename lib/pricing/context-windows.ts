/**
 * How many tokens a model's context window holds (prompt and completion together), which the
 * Responses API's `truncation: "auto"` fits a conversation into before calling the model. The
 * defaults below, with an operator's entries laid over them as prices.ts does for prices: from
 * `GATEWAY_CONTEXT_WINDOWS` (JSON) and then `GATEWAY_CONTEXT_WINDOWS_FILE` (a path to the same JSON),
 * read once per process: `{"<model>": <tokens> | null}`; `null` removes a model, so the gateway no
 * longer guesses its window and leaves the fitting to the provider's context-length error.
 *
 * A name matches a key exactly, else the longest key it extends by a snapshot suffix (a date, a
 * version or a tag: `gpt-4o-2024-08-06`, `claude-3-5-sonnet-20241022`, `gemini-1.5-pro-002`,
 * `claude-3-5-sonnet-latest`, `claude-3-5-sonnet-v2@20241022`, `…-v1:0`); a key ending in `*` matches
 * every name it begins. Only snapshots, because any other suffix names another model with its own
 * window (`o1-mini` is not `o1`, `claude-sonnet-4-5` is not `claude-sonnet-4`, `gpt-3.5-turbo-instruct`
 * is not `gpt-3.5-turbo`): an unknown window costs nothing (the provider's error still triggers
 * truncation), a window guessed too small drops turns the model could have read.
 *
 * Names are compared lower-cased, without a routing prefix (`openai/gpt-4o`, `@my-azure/gpt-4o`,
 * `models/gemini-2.0-flash`, a Bedrock ARN) or a Bedrock vendor prefix (`anthropic.claude-…`,
 * `us.anthropic.claude-…`); a key that keeps such a prefix matches that exact name first, so an
 * operator can give one route its own window.
 */
import { withOperatorOverrides } from './operator-overrides';

export type ContextWindowTable = Record<string, number>;

const openai: ContextWindowTable = {
  // The figures of OpenAI's model pages (platform.openai.com/docs/models), as the Vercel AI Gateway
  // and OpenRouter model pages repeat them.
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  o1: 200_000,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  // platform.openai.com/docs/models/gpt-3-5-turbo, as openai/openai-cookbook#1178 cites it.
  'gpt-3.5-turbo': 16_385,
};

/**
 * 200k for every Claude model listed: Anthropic's help center ("200K+ tokens for all other models"),
 * its context-windows page ("Other Claude models, including Claude Sonnet 4.5, have a 200k-token
 * context window"), and its own error for a longer prompt ("prompt is too long: … tokens > 200000
 * maximum"). Sonnet 4 and 4.5 reach 1M only with the `context-1m-2025-08-07` beta header, which the
 * gateway does not send; later models with a native 1M window are left out rather than guessed.
 */
const claude: ContextWindowTable = {
  'claude-3-haiku': 200_000,
  'claude-3-sonnet': 200_000,
  'claude-3-opus': 200_000,
  'claude-3-5-haiku': 200_000,
  'claude-3-5-sonnet': 200_000,
  'claude-3-7-sonnet': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-opus-4': 200_000,
  'claude-opus-4-1': 200_000,
  'claude-sonnet-4-5': 200_000,
  'claude-haiku-4-5': 200_000,
  'claude-opus-4-5': 200_000,
};

/**
 * Gemini's "input token limit" from Google's model pages (ai.google.dev/gemini-api/docs/models and
 * Vertex AI's model pages); the output limit is separate, so taking the input limit as the window
 * only makes the fit more cautious. Gemini 1.5 Pro's 2M window is Google's "up to a 2M token context
 * window" for Gemini 1.5 models, 2,097,152 tokens as Google's model list gives it.
 */
const gemini: ContextWindowTable = {
  'gemini-1.5-pro': 2_097_152,
  'gemini-1.5-flash': 1_048_576,
  'gemini-2.0-flash': 1_048_576,
  'gemini-2.0-flash-lite': 1_048_576,
  'gemini-2.5-pro': 1_048_576,
  'gemini-2.5-flash': 1_048_576,
  'gemini-2.5-flash-lite': 1_048_576,
};

const others: ContextWindowTable = {
  // Mistral Large 2 (2407) and Mistral-Large-Instruct-2411: "a large 128k context window" (Mistral's
  // model cards); the original Mistral Large (2402) had 32k ("128k vs 32k" in the Large 2 notes).
  // `mistral-large-latest` is left out: the alias moves to newer models with other windows.
  'mistral-large-2402': 32_000,
  'mistral-large-2407': 128_000,
  'mistral-large-2411': 128_000,
  // Mistral Small 3.1 (2503): "long context capabilities up to 128k tokens" (its model card).
  'mistral-small-2503': 128_000,
  // Llama 3.1 and 3.3: 128K (Meta's release notes as the Hugging Face Llama 3.1 post gives them;
  // Vertex AI's Llama 3.3 page: "Context length: 128,000"), whatever the size, hence the families.
  // Hosts that serve them with a shorter window need an operator's entry.
  'llama-3.1-*': 128_000,
  'llama-3.3-*': 128_000,
  'meta-llama-3.1-*': 128_000,
  'llama3-1-*': 128_000,
  'llama3-3-*': 128_000,
};

export const defaultContextWindows: ContextWindowTable = { ...openai, ...claude, ...gemini, ...others };

let table: ContextWindowTable | undefined;

/** Lays `overrides` over `base`; entries that are not a window are reported and left out. */
export function mergeContextWindows(base: ContextWindowTable, overrides: unknown, source: string): ContextWindowTable {
  const merged: ContextWindowTable = { ...base };
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    console.error(`${source} must be a JSON object of models and their context windows in tokens; ignored.`);
    return merged;
  }
  for (const [model, tokens] of Object.entries(overrides)) {
    const key = model.trim().toLowerCase();
    if (key === '' || key === '*') console.error(`${source}: "${model}" is not a model name; ignored.`);
    else if (tokens === null) delete merged[key];
    else if (typeof tokens === 'number' && Number.isSafeInteger(tokens) && tokens > 0) merged[key] = tokens;
    else console.error(`${source}: the context window of ${model} must be a whole number of tokens above 0 (or null to remove it); ignored.`);
  }
  return merged;
}

function loadContextWindows(): ContextWindowTable {
  return withOperatorOverrides(defaultContextWindows, 'GATEWAY_CONTEXT_WINDOWS', 'context windows', mergeContextWindows);
}

/** What may follow a key in a snapshot of its model: a date or build number, `latest`, a `vN` revision, or an `@`/`:` tag. */
const snapshotSuffix = /^(?:[-_](?:\d{3}|latest(?![a-z0-9])|v\d)|[@:])/;

/** The model without a routing prefix (`openai/`, `@slug/`, `models/`, an ARN) and a Bedrock vendor prefix (`us.anthropic.`). */
function bareName(name: string): string {
  const afterSlash = name.slice(name.lastIndexOf('/') + 1);
  // Only letters before each dot: `gpt-4.1` and `gemini-2.5-pro` keep their dots.
  return afterSlash.replace(/^(?:[a-z-]+\.)+/, '');
}

function lookup(windows: ContextWindowTable, name: string): number | undefined {
  if (Object.hasOwn(windows, name)) return windows[name];
  let best: { length: number; tokens: number } | undefined;
  for (const [key, tokens] of Object.entries(windows)) {
    const family = key.endsWith('*');
    const stem = family ? key.slice(0, -1) : key;
    if (!name.startsWith(stem) || (best && best.length >= stem.length)) continue;
    if (family || snapshotSuffix.test(name.slice(stem.length))) best = { length: stem.length, tokens };
  }
  return best?.tokens;
}

/** The context window of `model` in tokens, or undefined when the gateway does not know it. */
export function contextWindowOf(model: string): number | undefined {
  table ??= loadContextWindows();
  const name = model.trim().toLowerCase();
  if (name === '') return undefined;
  if (Object.hasOwn(table, name)) return table[name];
  return lookup(table, bareName(name));
}

/** Reads the overrides again (tests). */
export function reloadContextWindows(): void {
  table = undefined;
}
