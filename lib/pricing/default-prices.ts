/**
 * List prices in USD per million tokens, by provider (the gateway's provider name) and model (the
 * model the request asked for, after `override_params`). Standard tier, pay-as-you-go, text; an
 * operator with other rates (a discount, a region, a batch tier) overrides them with
 * `GATEWAY_PRICING` or `GATEWAY_PRICING_FILE` rather than editing this file.
 */
export interface ModelPrice {
  input: number;
  output: number;
  /** Prompt tokens read from the provider's prompt cache; the input price when absent. */
  cached_input?: number;
}

export type PriceTable = Record<string, Record<string, ModelPrice>>;

const p = (input: number, output: number, cached_input?: number): ModelPrice =>
  cached_input === undefined ? { input, output } : { input, output, cached_input };

const openai: Record<string, ModelPrice> = {
  'gpt-5': p(1.25, 10, 0.125),
  'gpt-5-mini': p(0.25, 2, 0.025),
  'gpt-5-nano': p(0.05, 0.4, 0.005),
  'gpt-4.1': p(2, 8, 0.5),
  'gpt-4.1-mini': p(0.4, 1.6, 0.1),
  'gpt-4.1-nano': p(0.1, 0.4, 0.025),
  'gpt-4o': p(2.5, 10, 1.25),
  'gpt-4o-2024-08-06': p(2.5, 10, 1.25),
  'gpt-4o-2024-11-20': p(2.5, 10, 1.25),
  'gpt-4o-mini': p(0.15, 0.6, 0.075),
  'gpt-4o-mini-2024-07-18': p(0.15, 0.6, 0.075),
  'gpt-4-turbo': p(10, 30),
  'gpt-3.5-turbo': p(0.5, 1.5),
  'gpt-3.5-turbo-instruct': p(1.5, 2),
  o1: p(15, 60, 7.5),
  'o1-mini': p(1.1, 4.4, 0.55),
  o3: p(2, 8, 0.5),
  'o3-mini': p(1.1, 4.4, 0.55),
  'o4-mini': p(1.1, 4.4, 0.275),
  'text-embedding-3-small': p(0.02, 0),
  'text-embedding-3-large': p(0.13, 0),
  'text-embedding-ada-002': p(0.1, 0),
};

const claude: Record<string, ModelPrice> = {
  'claude-opus-4-1-20250805': p(15, 75, 1.5),
  'claude-opus-4-20250514': p(15, 75, 1.5),
  'claude-sonnet-4-20250514': p(3, 15, 0.3),
  'claude-3-7-sonnet-20250219': p(3, 15, 0.3),
  'claude-3-7-sonnet-latest': p(3, 15, 0.3),
  'claude-3-5-sonnet-20241022': p(3, 15, 0.3),
  'claude-3-5-sonnet-20240620': p(3, 15, 0.3),
  'claude-3-5-sonnet-latest': p(3, 15, 0.3),
  'claude-3-5-haiku-20241022': p(0.8, 4, 0.08),
  'claude-3-5-haiku-latest': p(0.8, 4, 0.08),
  'claude-3-haiku-20240307': p(0.25, 1.25, 0.03),
  'claude-3-opus-20240229': p(15, 75, 1.5),
};

const gemini: Record<string, ModelPrice> = {
  'gemini-2.5-pro': p(1.25, 10, 0.31),
  'gemini-2.5-flash': p(0.3, 2.5, 0.075),
  'gemini-2.5-flash-lite': p(0.1, 0.4, 0.025),
  'gemini-2.0-flash': p(0.1, 0.4, 0.025),
  'gemini-2.0-flash-lite': p(0.075, 0.3),
  'gemini-1.5-pro': p(1.25, 5, 0.3125),
  'gemini-1.5-flash': p(0.075, 0.3, 0.01875),
  'gemini-embedding-001': p(0.15, 0),
};

/** Vertex AI names Claude models with `@` before the date. */
const vertexClaude: Record<string, ModelPrice> = {
  'claude-opus-4-1@20250805': claude['claude-opus-4-1-20250805']!,
  'claude-opus-4@20250514': claude['claude-opus-4-20250514']!,
  'claude-sonnet-4@20250514': claude['claude-sonnet-4-20250514']!,
  'claude-3-7-sonnet@20250219': claude['claude-3-7-sonnet-20250219']!,
  'claude-3-5-sonnet-v2@20241022': claude['claude-3-5-sonnet-20241022']!,
  'claude-3-5-haiku@20241022': claude['claude-3-5-haiku-20241022']!,
};

const bedrock: Record<string, ModelPrice> = {
  'anthropic.claude-sonnet-4-20250514-v1:0': p(3, 15, 0.3),
  'anthropic.claude-3-7-sonnet-20250219-v1:0': p(3, 15, 0.3),
  'anthropic.claude-3-5-sonnet-20241022-v2:0': p(3, 15, 0.3),
  'anthropic.claude-3-5-sonnet-20240620-v1:0': p(3, 15),
  'anthropic.claude-3-5-haiku-20241022-v1:0': p(0.8, 4, 0.08),
  'anthropic.claude-3-haiku-20240307-v1:0': p(0.25, 1.25),
  'amazon.nova-pro-v1:0': p(0.8, 3.2, 0.2),
  'amazon.nova-lite-v1:0': p(0.06, 0.24, 0.015),
  'amazon.nova-micro-v1:0': p(0.035, 0.14, 0.00875),
  'meta.llama3-1-70b-instruct-v1:0': p(0.72, 0.72),
  'meta.llama3-1-8b-instruct-v1:0': p(0.22, 0.22),
  'amazon.titan-embed-text-v2:0': p(0.02, 0),
  'cohere.embed-english-v3': p(0.1, 0),
  'cohere.embed-multilingual-v3': p(0.1, 0),
};

const cohere: Record<string, ModelPrice> = {
  'command-a-03-2025': p(2.5, 10),
  'command-r-plus': p(2.5, 10),
  'command-r-plus-08-2024': p(2.5, 10),
  'command-r': p(0.15, 0.6),
  'command-r-08-2024': p(0.15, 0.6),
  'command-r7b-12-2024': p(0.0375, 0.15),
  'embed-english-v3.0': p(0.1, 0),
  'embed-multilingual-v3.0': p(0.1, 0),
  'embed-v4.0': p(0.12, 0),
};

export const defaultPrices: PriceTable = {
  openai,
  // An Azure deployment is priced by the model name the request used, as OpenAI lists it.
  'azure-openai': openai,
  anthropic: claude,
  google: gemini,
  'vertex-ai': { ...gemini, ...vertexClaude },
  bedrock,
  cohere,
};
