import { maxLength, nullable, object, optional, record, refine, string, type ZodMiniType } from 'zod/mini';
import { GatewayError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { isGatewayFileId, selectsProvider } from '../files/provider-selection';
import { controlRoutes, defineRoute } from '../http/define-route';
import { passthroughFromResource } from '../http/inference/passthrough-route';
import { workOptionsOf } from '../provider-jobs/request-options';
import { readJsonObject } from '../http/json-body';
import { listEnvelope, pageQuery } from '../http/pagination';
import type { RouteContext, RouteHandler } from '../http/pipeline';
import type { GatewayResponse } from '../http/types';
import { batchEndpoints } from './batch-input';
import { presentBatch } from './batch-object';
import { cancelBatch, completionWindows, createBatch, currentCounts, findBatch, isGatewayBatchId, listBatches } from './batches';

/** The spec's bounds on a batch's metadata. */
const maxMetadataPairs = 16;
const maxMetadataKeyLength = 64;
const maxMetadataValueLength = 512;

const batchIdParams = object({ batchId: string() });

const createBody = object({
  input_file_id: string().check(
    refine(isGatewayFileId, { error: 'input_file_id must be the id of a file uploaded to the gateway with purpose "batch" (gwf_…).' }),
  ),
  endpoint: string().check(refine((endpoint) => endpoint in batchEndpoints, { error: `endpoint must be one of ${Object.keys(batchEndpoints).join(', ')}.` })),
  completion_window: string().check(
    refine((window) => window in completionWindows, {
      error: `completion_window must be one of ${Object.keys(completionWindows)
        .map((name) => `"${name}"`)
        .join(', ')}.`,
    }),
  ),
  metadata: optional(
    nullable(
      record(
        string().check(maxLength(maxMetadataKeyLength, `metadata keys must be at most ${maxMetadataKeyLength} characters.`)),
        string().check(maxLength(maxMetadataValueLength, `metadata values must be strings of at most ${maxMetadataValueLength} characters.`)),
      ).check(refine((pairs) => Object.keys(pairs).length <= maxMetadataPairs, { error: `metadata may have at most ${maxMetadataPairs} pairs.` })),
    ),
  ) as ZodMiniType<Record<string, string> | null | undefined>,
});

export const managedBatches = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/batches',
    role: 'member',
    body: createBody,
    invalidCode: 'invalid_batch',
    async handler({ body }, context) {
      const { auth, trace } = context;
      const caller = { organisationId: auth.organisationId, workspaceId: auth.workspaceId, keyId: auth.keyId };
      const item = await createBatch(caller, { ...body, metadata: body.metadata ?? null }, await workOptionsOf(context), trace.metadata ?? {});
      return presentBatch(item);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/batches',
    role: 'member',
    query: pageQuery(20),
    async handler({ query }, { auth }) {
      const page = await listBatches(auth.workspaceId, query);
      const counts = await Promise.all(page.data.map(currentCounts));
      return listEnvelope({ data: page.data.map((item, index) => presentBatch(item, counts[index])), has_more: page.has_more });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/batches/{batchId}',
    role: 'member',
    params: batchIdParams,
    async handler({ params }, { auth }) {
      const item = await findBatch(auth.workspaceId, params.batchId);
      return presentBatch(item, await currentCounts(item));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/batches/{batchId}/cancel',
    role: 'member',
    params: batchIdParams,
    emptyBodyAllowed: true,
    async handler({ params }, { auth }) {
      const item = await cancelBatch(auth.workspaceId, params.batchId);
      return presentBatch(item, await currentCounts(item));
    },
  }),
);

/**
 * Whether a batches request is the gateway's. A gateway id decides it whatever the headers say (a
 * create names its input file; the other routes their batch): provider headers beside a gateway
 * file pick the provider of the lines. Otherwise a request that selects a provider is passed through
 * to the provider's own batch API, as it always was.
 */
function isManagedBatchRequest({ request }: RouteContext): boolean {
  const { batchId } = request.pathParameters;
  if (batchId !== undefined) return isGatewayBatchId(batchId) || !selectsProvider(request.headers);
  if (request.method === 'POST') {
    const body = safeBody(request);
    if (typeof body?.input_file_id === 'string' && isGatewayFileId(body.input_file_id)) return true;
  }
  return !selectsProvider(request.headers);
}

function safeBody(request: RouteContext['request']): Record<string, unknown> | undefined {
  try {
    const body = readJsonObject(request);
    return isPlainObject(body) ? body : undefined;
  } catch (error) {
    if (error instanceof GatewayError) return undefined;
    throw error;
  }
}

/**
 * `/v1/batches`, `/v1/batches/{batchId}` and `/v1/batches/{batchId}/cancel`: the gateway's managed
 * batches, or a provider's batch API passed through (these routes take precedence over
 * `/v1/{proxy+}` in API Gateway, so provider batch requests come here too).
 */
export const batchesRoute: RouteHandler = async function batches(context: RouteContext): Promise<GatewayResponse> {
  return isManagedBatchRequest(context) ? managedBatches(context) : passthroughFromResource(context);
};
