import { badRequest } from '../core/errors';
import { object, optional, pipe, refine, string, transform } from 'zod/mini';

export interface PageQuery {
  limit: number;
  after?: string;
}

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
          refine((after) => after === '' || cursorPattern.test(after), { error: 'after must be the last_id of the previous page, e.g. "log_01jd3…".', params: { code: 'invalid_cursor' } }),
        ),
      ),
      transform((after): string | undefined => after || undefined),
    ),
  });
}

/** Reads `limit` (1–100, default 20) and `after` (the last id of the previous page). */
export function readPageQuery(query: Record<string, string>, defaultLimit = 20): PageQuery {
  let limit = defaultLimit;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badRequest('limit must be an integer from 1 to 100.', 'limit', 'invalid_limit');
  }
  const page: PageQuery = { limit };
  if (query.after) {
    if (!cursorPattern.test(query.after)) throw badRequest('after must be the last_id of the previous page, e.g. "log_01jd3…".', 'after', 'invalid_cursor');
    page.after = query.after;
  }
  return page;
}

/** The list envelope: newest first, with the cursor of the next page in `last_id`. */
export function listEnvelope<T extends { id: string }>(data: T[], hasMore: boolean) {
  return { object: 'list', data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
