import { array, maxLength, nullable, number, object, optional, record, refine, string, unknown, type ZodMiniType } from 'zod/mini';
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
import { listFineTuningCheckpoints, listFineTuningEvents } from '../store/fine-tuning-jobs';
import { presentJob } from './job-object';
import { cancelJob, createJob, findJob, isGatewayJobId, listJobs } from './jobs';

const jobIdParams = object({ jobId: string() });
const maxIntegrations = 5;

const createBody = object({
  model: string().check(
    refine((model) => model.length > 0 && model.length <= 256, { error: 'model must name the base model, for example "gpt-4o-mini-2024-07-18".' }),
  ),
  training_file: string().check(
    refine(isGatewayFileId, { error: 'training_file must be the id of a file uploaded to the gateway with purpose "fine-tune" (gwf_…).' }),
  ),
  validation_file: optional(
    nullable(string().check(refine(isGatewayFileId, { error: 'validation_file must be a gateway file id (gwf_…) with purpose "fine-tune".' }))),
  ),
  suffix: optional(nullable(string().check(maxLength(64, 'suffix must be at most 64 characters.')))),
  method: optional(record(string(), unknown())),
  hyperparameters: optional(record(string(), unknown())),
  integrations: optional(
    nullable(array(record(string(), unknown())).check(maxLength(maxIntegrations, `integrations may list at most ${maxIntegrations} integrations.`))),
  ),
  seed: optional(nullable(number().check(refine(Number.isInteger, { error: 'seed must be an integer.' })))),
  metadata: optional(
    nullable(
      record(
        string().check(maxLength(64, 'metadata keys must be at most 64 characters.')),
        string().check(maxLength(512, 'metadata values must be strings of at most 512 characters.')),
      ).check(refine((pairs) => Object.keys(pairs).length <= 16, { error: 'metadata may have at most 16 pairs.' })),
    ),
  ) as ZodMiniType<Record<string, string> | null | undefined>,
});

export const gatewayJobs = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/fine_tuning/jobs',
    role: 'member',
    body: createBody,
    invalidCode: 'invalid_fine_tuning_job',
    async handler({ body }, context) {
      const { auth, trace } = context;
      const caller = { organisationId: auth.organisationId, workspaceId: auth.workspaceId, keyId: auth.keyId };
      return presentJob(await createJob(caller, body, await workOptionsOf(context), trace.metadata ?? {}));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/fine_tuning/jobs',
    role: 'member',
    query: pageQuery(20),
    handler: async ({ query }, { auth }) => listEnvelope(await listJobs(auth.workspaceId, query), presentJob),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/fine_tuning/jobs/{jobId}',
    role: 'member',
    params: jobIdParams,
    handler: async ({ params }, { auth }) => presentJob(await findJob(auth.workspaceId, params.jobId)),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/fine_tuning/jobs/{jobId}/cancel',
    role: 'member',
    params: jobIdParams,
    emptyBodyAllowed: true,
    handler: async ({ params }, { auth }) => presentJob(await cancelJob(auth.workspaceId, params.jobId)),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/fine_tuning/jobs/{jobId}/checkpoints',
    role: 'member',
    params: jobIdParams,
    query: pageQuery(10),
    async handler({ params, query }, { auth }) {
      await findJob(auth.workspaceId, params.jobId);
      return listEnvelope(await listFineTuningCheckpoints(auth.workspaceId, params.jobId, query));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/fine_tuning/jobs/{jobId}/events',
    role: 'member',
    params: jobIdParams,
    query: pageQuery(20),
    async handler({ params, query }, { auth }) {
      await findJob(auth.workspaceId, params.jobId);
      return listEnvelope(await listFineTuningEvents(auth.workspaceId, params.jobId, query));
    },
  }),
);

/**
 * Whether a fine-tuning request is the gateway's: a gateway job id, or a create naming a gateway
 * file, whatever the headers (they choose the provider); otherwise a request that selects a provider
 * is passed through to the provider's own fine-tuning API, as it always was.
 */
function isGatewayJobRequest({ request }: RouteContext): boolean {
  const { jobId } = request.pathParameters;
  if (jobId !== undefined) return isGatewayJobId(jobId) || !selectsProvider(request.headers);
  if (request.method === 'POST') {
    try {
      const body = readJsonObject(request);
      if (isPlainObject(body) && typeof body.training_file === 'string' && isGatewayFileId(body.training_file)) return true;
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
    }
  }
  return !selectsProvider(request.headers);
}

/** `/v1/fine_tuning/jobs…`: the gateway's jobs, or a provider's fine-tuning API passed through. */
export const fineTuningRoute: RouteHandler = async function fineTuning(context: RouteContext): Promise<GatewayResponse> {
  return isGatewayJobRequest(context) ? gatewayJobs(context) : passthroughFromResource(context);
};
