/**
 * The vocabulary of a strategy condition's query (`strategy.conditions[].query`): the operators and
 * fields a config may use. It belongs to the config object, so validation names them without
 * reaching into routing; routing's matcher (`lib/routing/conditional-query.ts`) understands exactly
 * these, and its tests hold every operator listed here to a case of its own.
 */

export const queryOperators = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$regex', '$exists'] as const;

/** The fields a query can test; anything else would never match. */
export const queryFields = { pattern: /^(metadata|params)\.[^.]|^url\.pathname$/, text: 'metadata.<key>, params.<path> or url.pathname' };
