import { maxLength, minLength, object, optional, pipe, refine, string, transform } from 'zod/mini';
import { GatewayError } from '../core/errors';
import { controlRoutes, defineRoute, type ControlRoute } from '../http/define-route';
import { passthroughFromResource } from '../http/inference/passthrough-route';
import { listEnvelope } from '../http/pagination';
import { maxRequestBodyBytes, type RouteContext, type RouteHandler } from '../http/pipeline';
import type { GatewayRequest, GatewayResponse } from '../http/types';
import { isGatewayFileId, isGatewayFilesRequest } from './provider-selection';
import { createFile, deleteFile, findFile, listFiles, openFileContent, presentFile } from './stored-files';
import { readUploadForm } from './upload-form';
import { gatewayUploadRoutes } from './uploads-route';

/** OpenAI's bounds for a file listing's `limit`. */
const maxListLimit = 10_000;

const fileIdParams = object({ fileId: string() });

const listQuery = object({
  limit: pipe(
    optional(
      string().check(
        refine((value) => /^\d{1,5}$/.test(value) && Number(value) >= 1 && Number(value) <= maxListLimit, {
          error: `limit must be an integer from 1 to ${maxListLimit}.`,
          params: { code: 'invalid_limit' },
        }),
      ),
    ),
    transform((limit): number => (limit === undefined ? maxListLimit : Number(limit))),
  ),
  after: pipe(
    optional(
      string().check(
        refine((after) => after === '' || (isGatewayFileId(after) && /^[0-9a-z_]{1,64}$/.test(after)), {
          error: 'after must be the last_id of the previous page, a file id such as "gwf_01jd3…".',
          params: { code: 'invalid_cursor' },
        }),
      ),
    ),
    transform((after): string | undefined => after || undefined),
  ),
  order: pipe(
    optional(
      string().check(refine((order) => order === 'asc' || order === 'desc', { error: 'order must be "asc" or "desc".', params: { code: 'invalid_order' } })),
    ),
    transform((order): 'asc' | 'desc' => (order === 'asc' ? 'asc' : 'desc')),
  ),
  purpose: optional(string().check(minLength(1, 'purpose must not be empty.'), maxLength(64, 'purpose must be at most 64 characters.'))),
});

/** `GET /v1/files/{fileId}/content`: the bytes as S3 sends them, never held whole (an answer may be far above what a buffered answer can carry). */
const contentRoute: ControlRoute = {
  method: 'GET',
  path: '/v1/files/{fileId}/content',
  role: 'member',
  params: fileIdParams,
  async run({ request, auth }) {
    const { content } = await openFileContent(auth.workspaceId, request.pathParameters.fileId ?? '');
    // Always bytes to save: a type the uploader chose (text/html, say) would be rendered by a browser.
    return { status: 200, headers: { 'content-type': 'application/octet-stream', 'x-content-type-options': 'nosniff' }, body: content };
  },
};

/** The gateway's own Files and Uploads APIs, OpenAI's routes and shapes, one workspace's files at a time. */
export const gatewayFiles = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/files',
    role: 'member',
    handler: async (_input, { request, auth }) => presentFile(await createFile(auth.workspaceId, readUploadForm(request))),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/files',
    role: 'member',
    query: listQuery,
    handler: async ({ query }, { auth }) => listEnvelope(await listFiles(auth.workspaceId, query), presentFile),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/files/{fileId}',
    role: 'member',
    params: fileIdParams,
    handler: async ({ params }, { auth }) => presentFile(await findFile(auth.workspaceId, params.fileId)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/files/{fileId}',
    role: 'member',
    params: fileIdParams,
    async handler({ params }, { auth }) {
      await deleteFile(auth.workspaceId, params.fileId);
      return { id: params.fileId, object: 'file', deleted: true };
    },
  }),
  contentRoute,
  ...gatewayUploadRoutes,
);

/**
 * `/v1/files`, `/v1/files/{fileId}`, `/v1/files/{fileId}/content`, `/v1/uploads` and
 * `/v1/uploads/{uploadId}/{parts,complete,cancel}`, any method. These routes take
 * precedence over `/v1/{proxy+}` in API Gateway, so the requests for a provider's files come here
 * too: a request that selects a provider (and names no gateway file) goes through the same
 * pass-through as every other provider path; the rest are the gateway's own (provider-selection.ts).
 */
export const filesRoute: RouteHandler = Object.assign(
  async function files(context: RouteContext): Promise<GatewayResponse> {
    if (isGatewayFilesRequest(context.request)) return gatewayFiles(context);
    return passthroughFromResource(context);
  },
  {
    tooLarge: (bytes: number, request: GatewayRequest) =>
      request.resource === '/v1/uploads/{uploadId}/parts'
        ? new GatewayError(
            413,
            `The request body is ${bytes} bytes; a part may make a body of at most ${maxRequestBodyBytes} bytes (4 MB). Send smaller parts: an upload takes many.`,
            { param: 'data', code: 'request_too_large' },
          )
        : new GatewayError(
            413,
            `The request body is ${bytes} bytes; a file uploaded in one request may make a body of at most ${maxRequestBodyBytes} bytes (4 MB). Upload larger files in parts with the Uploads API (POST /v1/uploads).`,
            { param: 'file', code: 'request_too_large' },
          ),
  },
);
