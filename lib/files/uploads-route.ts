import { object, string } from 'zod/mini';
import { defineRoute, type ControlRoute } from '../http/define-route';
import { readJsonObject } from '../http/json-body';
import { addPart, cancelUpload, completeUpload, createUpload, presentUpload } from './uploads';

const uploadIdParams = object({ uploadId: string() });

/**
 * The gateway's Uploads API, OpenAI's routes and shapes. Bodies are read in the handlers rather than
 * by schemas: each refusal names its field in OpenAI's terms, and the parts route takes multipart.
 */
export const gatewayUploadRoutes: ControlRoute[] = [
  defineRoute({
    method: 'POST',
    path: '/v1/uploads',
    role: 'member',
    handler: async (_input, { request, auth }) => presentUpload(await createUpload(auth.workspaceId, readJsonObject(request))),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/uploads/{uploadId}/parts',
    role: 'member',
    params: uploadIdParams,
    handler: ({ params }, { request, auth }) => addPart(auth.workspaceId, params.uploadId, request),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/uploads/{uploadId}/complete',
    role: 'member',
    params: uploadIdParams,
    handler: ({ params }, { request, auth }) => completeUpload(auth.workspaceId, params.uploadId, readJsonObject(request)),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/uploads/{uploadId}/cancel',
    role: 'member',
    params: uploadIdParams,
    handler: ({ params }, { auth }) => cancelUpload(auth.workspaceId, params.uploadId),
  }),
];
