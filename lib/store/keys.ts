/**
 * The partition and sort key patterns of the stack's tables. Entities move here as they move behind
 * the store layer; a key pattern is written once, next to the others of its table.
 */

/** State table: one item per (config identity, target path) holding a circuit breaker. */
export const breakerKey = {
  partition: (identity: string) => `CB#${identity}`,
  item: (identity: string, path: string) => ({ pk: breakerKey.partition(identity), sk: path }),
};
