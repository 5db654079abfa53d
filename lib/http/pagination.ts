import { object, optional, pipe, refine, string, transform } from 'zod/mini';

// Every listed id is `<prefix>_` and 26 base32 characters; anything else would only reach DynamoDB
// to be refused there (a key above 1,024 bytes fails the whole call).
const cursorPattern = /^[a-z]{1,16}_[0-9a-z]{1,64}$/;

const isLimit = (value: string) => {
  const limit = Number(value);
  return Number.isInteger(limit) && limit >= 1 && limit <= 100;
};

/** The query of a list: `limit` (1–100, `defaultLimit` when absent) and `after` (the last id of the previous page). */
export function pageQuery(defaultLimit = 20) {
  return object({
    limit: pipe(
      optional(string().check(refine(isLimit, { error: 'limit must be an integer from 1 to 100.', params: { code: 'invalid_limit' } }))),
      transform((limit): number => (limit === undefined ? defaultLimit : Number(limit))),
    ),
    after: pipe(
      optional(
        string().check(
          refine((after) => after === '' || cursorPattern.test(after), {
            error: 'after must be the last_id of the previous page, e.g. "log_01jd3…".',
            params: { code: 'invalid_cursor' },
          }),
        ),
      ),
      transform((after): string | undefined => after || undefined),
    ),
  });
}

export interface ListEnvelope<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/** The list envelope of a store's page, newest first, with the cursor of the next page in `last_id`. */
export function listEnvelope<T extends { id: string }>(page: { data: T[]; has_more: boolean }): ListEnvelope<T>;
export function listEnvelope<R, T extends { id: string }>(page: { data: R[]; has_more: boolean }, present: (item: R) => T): ListEnvelope<T>;
export function listEnvelope(page: { data: { id: string }[]; has_more: boolean }, present = (item: { id: string }) => item): ListEnvelope<{ id: string }> {
  const data = page.data.map(present);
  return { object: 'list', data, has_more: page.has_more, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
