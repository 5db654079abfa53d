/**
 * The price table the gateway uses: the defaults, with an operator's overrides laid over them.
 * Overrides come from `GATEWAY_PRICING` (JSON) and then `GATEWAY_PRICING_FILE` (a path to the same
 * JSON), read once per process: `{"<provider>": {"<model>": {"input", "output", "cached_input"?} | null}}`,
 * USD per million tokens; `null` removes a model, so its cost becomes unknown.
 */
import type { TokenUsage } from '../core/usage';
import { defaultPrices, type ModelPrice, type PriceTable } from './default-prices';
import { withOperatorOverrides } from './operator-overrides';

export type { ModelPrice, PriceTable } from './default-prices';

let table: PriceTable | undefined;

/** Lays `overrides` over `base`; entries that are not prices are reported and left out, never half-applied. */
export function mergePrices(base: PriceTable, overrides: unknown, source: string): PriceTable {
  const merged: PriceTable = Object.fromEntries(Object.entries(base).map(([provider, models]) => [provider, { ...models }]));
  if (!isObject(overrides)) {
    console.error(`${source} must be a JSON object of providers; ignored.`);
    return merged;
  }
  for (const [provider, models] of Object.entries(overrides)) {
    if (!isObject(models)) {
      console.error(`${source}: "${provider}" must be an object of models; ignored.`);
      continue;
    }
    const into = (merged[provider] ??= {});
    for (const [model, price] of Object.entries(models)) {
      if (price === null) delete into[model];
      else if (isPrice(price))
        into[model] =
          price.cached_input === undefined
            ? { input: price.input, output: price.output }
            : { input: price.input, output: price.output, cached_input: price.cached_input };
      else
        console.error(
          `${source}: the price of ${provider}/${model} must be {"input", "output", "cached_input"?} in USD per million tokens (numbers, at least 0); ignored.`,
        );
    }
  }
  return merged;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isAmount = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;

function isPrice(value: unknown): value is ModelPrice {
  return (
    isObject(value) &&
    isAmount(value.input) &&
    isAmount(value.output) &&
    (value.cached_input === undefined || isAmount(value.cached_input)) &&
    Object.keys(value).every((key) => key === 'input' || key === 'output' || key === 'cached_input')
  );
}

function loadPrices(): PriceTable {
  return withOperatorOverrides(defaultPrices, 'GATEWAY_PRICING', 'prices', mergePrices);
}

/** The price of a provider's model, or undefined when the table has none (the cost is then unknown). */
export function priceOf(provider: string | undefined, model: string | undefined): ModelPrice | undefined {
  if (!provider || !model) return undefined;
  table ??= loadPrices();
  const models = table[provider];
  return models && Object.hasOwn(models, model) ? models[model] : undefined;
}

/** Reads the overrides again (tests). */
export function reloadPrices(): void {
  table = undefined;
}

/**
 * USD a call cost: uncached prompt tokens at the input price, cached ones at the cached-input price
 * (OpenAI's `prompt_tokens` includes `cached_tokens`), completion tokens at the output price.
 * Undefined without a price; rounded to a nano-dollar so sums stay readable.
 */
export function costOf(price: ModelPrice | undefined, usage: TokenUsage): number | undefined {
  if (!price) return undefined;
  const cached = Math.min(usage.prompt_tokens_details?.cached_tokens ?? 0, usage.prompt_tokens);
  const micro = (usage.prompt_tokens - cached) * price.input + cached * (price.cached_input ?? price.input) + usage.completion_tokens * price.output;
  return roundUsd(micro / 1_000_000);
}

export function roundUsd(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
