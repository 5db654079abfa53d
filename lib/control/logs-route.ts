import { object, string } from 'zod/mini';
import { notFound } from '../core/errors';
import { controlRoutes, defineRoute } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';
import type { RequestLogRecord } from '../observability/request-log';
import { findLogsByTrace, listLogs } from '../store/request-logs';

/** A trace is mostly read whole: a page holds as many records as a page may. */
const tracePageLimit = 100;

/**
 * `/v1/logs` (recent logs of the caller's workspace) and `/v1/logs/{traceId}` (the records of one
 * trace), both paged newest first. Path parameters arrive decoded (API Gateway decodes them), so
 * the trace id is used as it comes: decoding it again would misread a `%` in the id.
 */
export const logsRoute = controlRoutes(
  defineRoute({
    method: 'GET',
    path: '/v1/logs',
    role: 'member',
    query: pageQuery(),
    handler: async ({ query }, { auth }) => listEnvelope(await listLogs<RequestLogRecord>(auth.workspaceId, query)),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/logs/{traceId}',
    role: 'member',
    params: object({ traceId: string() }),
    query: pageQuery(tracePageLimit),
    async handler({ params: { traceId }, query }, { auth }) {
      const page = await findLogsByTrace<RequestLogRecord>(auth.workspaceId, traceId, query);
      // Past the last page a trace has nothing more, which is not the same as an unknown trace.
      if (page.data.length === 0 && !query.after)
        throw notFound(`No logs for trace id ${traceId} in this workspace (logs appear a moment after the request completes).`, 'log_not_found');
      const { object: list, ...cursor } = listEnvelope(page);
      return { object: list, trace_id: traceId, ...cursor };
    },
  }),
);
