import { badRequest } from './errors';

export interface PageQuery {
  limit: number;
  after?: string;
}

/** Reads `limit` (1–100, default 20) and `after` (the last id of the previous page). */
export function readPageQuery(query: Record<string, string>, defaultLimit = 20): PageQuery {
  let limit = defaultLimit;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badRequest('limit must be an integer from 1 to 100.', 'limit', 'invalid_limit');
  }
  const page: PageQuery = { limit };
  if (query.after) page.after = query.after;
  return page;
}

/** The list envelope: newest first, with the cursor of the next page in `last_id`. */
export function listEnvelope<T extends { id: string }>(data: T[], hasMore: boolean) {
  return { object: 'list', data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
