import { notFound } from '../http/errors';
import { listEnvelope, readPageQuery } from '../http/pagination';
import type { RouteContext } from '../http/pipeline';
import { jsonResponse } from '../http/responses';
import type { GatewayResponse } from '../http/types';
import { findLogsByTrace, listLogs } from '../observability/log-store';

/**
 * `/v1/logs` (recent logs of the caller's workspace) and `/v1/logs/{traceId}` (the records of one
 * trace). Path parameters arrive decoded (API Gateway decodes them), so the trace id is used as it
 * comes: decoding it again would misread a `%` in the id.
 */
export async function logsRoute({ request, auth }: RouteContext): Promise<GatewayResponse> {
  const traceId = request.pathParameters.traceId;
  if (traceId) {
    const records = await findLogsByTrace(auth.workspaceId, traceId);
    if (records.length === 0) throw notFound(`No logs for trace id ${traceId} in this workspace (logs appear a moment after the request completes).`, 'log_not_found');
    return jsonResponse(200, { object: 'list', trace_id: records[0].trace_id, data: records });
  }
  const page = await listLogs(auth.workspaceId, readPageQuery(request.query));
  return jsonResponse(200, listEnvelope(page.data, page.has_more));
}
