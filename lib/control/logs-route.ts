import { notFound } from '../core/errors';
import { listEnvelope, readPageQuery } from '../http/pagination';
import type { RouteContext } from '../http/pipeline';
import { jsonResponse } from '../http/responses';
import type { GatewayResponse } from '../http/types';
import type { RequestLogRecord } from '../observability/request-log';
import { findLogsByTrace, listLogs } from '../store/request-logs';

/** A trace is mostly read whole: a page holds as many records as a page may. */
const tracePageLimit = 100;

/**
 * `/v1/logs` (recent logs of the caller's workspace) and `/v1/logs/{traceId}` (the records of one
 * trace), both paged newest first. Path parameters arrive decoded (API Gateway decodes them), so
 * the trace id is used as it comes: decoding it again would misread a `%` in the id.
 */
export async function logsRoute({ request, auth }: RouteContext): Promise<GatewayResponse> {
  const traceId = request.pathParameters.traceId;
  if (traceId) {
    const query = readPageQuery(request.query, tracePageLimit);
    const page = await findLogsByTrace<RequestLogRecord>(auth.workspaceId, traceId, query);
    // Past the last page a trace has nothing more, which is not the same as an unknown trace.
    if (page.data.length === 0 && !query.after) throw notFound(`No logs for trace id ${traceId} in this workspace (logs appear a moment after the request completes).`, 'log_not_found');
    const { object, ...cursor } = listEnvelope(page.data, page.has_more);
    return jsonResponse(200, { object, trace_id: traceId, ...cursor });
  }
  const page = await listLogs<RequestLogRecord>(auth.workspaceId, readPageQuery(request.query));
  return jsonResponse(200, listEnvelope(page.data, page.has_more));
}
