import { object, string } from 'zod/mini';
import { notFound } from '../core/errors';
import { controlRoutes, defineRoute } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';
import { listWorkspaces } from '../auth/workspaces';
import { groupRows, groupsQuery, usedRange } from '../observability/log-queries';
import { logListQuery } from '../observability/log-queries';
import type { RequestLogRecord } from '../observability/request-log';
import { listTraceFeedback } from '../store/feedback';
import { findLogsByTrace, listLogsFiltered } from '../store/request-logs';
import { feedbackRoutes } from './logs-feedback-routes';
import type { RouteContext } from '../http/pipeline';

/** A trace is mostly read whole: a page holds as many records as a page may. */
const tracePageLimit = 100;

/**
 * `/v1/logs` (logs of the caller's workspace, filtered) and `/v1/logs/{traceId}` (the records of
 * one trace), both paged newest first; the groups routes answer from the analytics rollups. Path
 * parameters arrive decoded (API Gateway decodes them), so the trace id is used as it comes:
 * decoding it again would misread a `%` in the id. Query parameters are read whole (the filters
 * include `metadata.<key>`), so the list and groups routes parse them themselves.
 */
export const logsRoute = controlRoutes(
  defineRoute({
    method: 'GET',
    path: '/v1/logs',
    role: 'member',
    handler: async (_input, { auth, request }) => listEnvelope(await listLogsFiltered<RequestLogRecord>(auth.workspaceId, logListQuery(request.query))),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/logs/{traceId}',
    role: 'member',
    params: object({ traceId: string() }),
    query: pageQuery(tracePageLimit),
    async handler({ params: { traceId }, query }, { auth }) {
      const [page, feedback] = await Promise.all([
        findLogsByTrace<RequestLogRecord>(auth.workspaceId, traceId, query),
        query.after ? undefined : listTraceFeedback(auth.workspaceId, traceId),
      ]);
      // Past the last page a trace has nothing more, which is not the same as an unknown trace.
      if (page.data.length === 0 && !query.after)
        throw notFound(`No logs for trace id ${traceId} in this workspace (logs appear a moment after the request completes).`, 'log_not_found');
      const { object: list, ...cursor } = listEnvelope(page);
      return { object: list, trace_id: traceId, ...cursor, ...(feedback ? { feedback } : {}) };
    },
  }),
  defineRoute({ method: 'GET', path: '/v1/logs/groups/{groupBy}', role: 'member', params: object({ groupBy: string() }), handler: groups }),
  defineRoute({ method: 'GET', path: '/v1/analytics/groups/{groupBy}', role: 'member', params: object({ groupBy: string() }), handler: groups }),
  ...feedbackRoutes,
);

/**
 * A groups answer. `workspace` groups every workspace of the organisation for an owner and the
 * caller's own for anyone else; every other grouping covers the caller's (an owner's home) workspace.
 */
async function groups({ params: { groupBy } }: { params: { groupBy: string } }, { auth, request }: RouteContext) {
  const query = groupsQuery(groupBy, request.query);
  const workspaces =
    query.dimension === 'all' && auth.role === 'owner'
      ? (await listWorkspaces(auth.organisationId, ['active', 'archived'])).map((workspace) => workspace.id)
      : [auth.workspaceId];
  const data = await groupRows(workspaces, query);
  return {
    object: 'list',
    group_by: groupBy,
    columns: ['requests', ...query.columns],
    ...usedRange(query),
    ...(query.interval ? { interval: query.interval } : {}),
    data,
    total: data.length,
  };
}
