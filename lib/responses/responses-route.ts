/**
 * `/v1/responses…`: OpenAI's Responses API over the inference core. A create is translated to a
 * chat-completions request and run by `runInference` like any other (config, routing, retries,
 * cache, guardrails, limits, logs), and its answer, whole or streamed, translated back; unless
 * `store` is false it is stored after the answer, for `GET`, `DELETE`, `input_items` and
 * `previous_response_id`.
 */
import { Readable } from 'node:stream';
import { enum as enumOf, object, optional, pipe, refine, string, transform } from 'zod/mini';
import { badRequest, GatewayError, notFound } from '../core/errors';
import { newId } from '../core/ids';
import { readBody } from '../core/read-body';
import { isReadable } from '../core/readable';
import { controlRoutes, defineRoute } from '../http/define-route';
import { unifiedHttpFields, unifiedWithFields } from '../http/inference/from-http';
import { routedResponse } from '../http/inference/routed-response';
import { commitStreamWhileRouting, streamCommitDelayMs } from '../http/inference/stream-commit';
import { readJsonObject } from '../http/json-body';
import { workOptionsOf } from '../provider-jobs/request-options';
import type { RouteContext, RouteHandler } from '../http/pipeline';
import type { GatewayResponse } from '../http/types';
import type { InferenceContext } from '../inference/context';
import { inferenceContext, runInference } from '../inference/run-inference';
import { cancelStoredResponse, deleteStoredResponse, getStoredResponse, putStoredResponse, putUnstoredMarker, type StoredResponse } from '../store/responses';
import { queueBackgroundResponse } from './background';
import { inputItems } from './input-items';
import { checkConversation, nativeLinkOf, runResponse, stampedAnswer, type Continued } from './run-response';
import { stampedEventStream } from './stamped-events';
import { checkResponsesRequest } from '../providers/responses-format/request';
import { baseResponse } from '../providers/responses-format/response-object';
import type { ConversationItem, ResponseObject } from '../providers/responses-format/types';

/** A response as the gateway stores it. */
type Stored = StoredResponse<ResponseObject, ConversationItem>;

/** A chat completion answered whole is far below this; it only bounds what is held to be translated. */
const maxAnswerBytes = 64 * 1024 * 1024;

const responseIdPattern = /^resp_[0-9a-z]{26}$/;

function responseNotFound(id: string): GatewayError {
  return notFound(`No response with id ${JSON.stringify(id.slice(0, 100))} in this workspace.`, 'response_not_found');
}

async function createResponse(context: RouteContext): Promise<GatewayResponse> {
  const request = checkResponsesRequest(readJsonObject(context.request));
  if (request.background === true && request.store === false) {
    throw badRequest('A background response is stored while it runs: send store: true (the default) with background.', 'store', 'invalid_value');
  }
  if (request.background === true && request.stream === true) {
    throw badRequest(
      'background responses are not streamed here: send one without stream and read it with GET /v1/responses/{id}.',
      'stream',
      'unsupported_parameter',
    );
  }
  const workspaceId = context.auth.workspaceId;
  const continued = request.previous_response_id ? await conversationBefore(workspaceId, request.previous_response_id) : { history: [] };
  const input = inputItems(request);
  const base = baseResponse(request, {
    id: newId('resp'),
    createdAt: Math.floor(Date.now() / 1000),
    status: request.background === true ? 'queued' : undefined,
  });
  if (request.background === true) {
    // Checked now, so that a request no provider could take is refused at once rather than failing later.
    checkConversation(request, continued.history);
    const { auth, trace } = context;
    const caller = { organisationId: auth.organisationId, workspaceId, keyId: auth.keyId };
    const queued = await queueBackgroundResponse(
      { response: base, input, history: continued.history, link: continued.link, run: { request, caller, metadata: trace.metadata ?? {} } },
      await workOptionsOf(context),
    );
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(queued) };
  }

  // Read once, before the first run: `inference` is set before runResponse returns.
  context.recorder.requested({ stream: request.stream === true, model: request.model });
  const fields = await unifiedHttpFields(context);
  let inference!: InferenceContext;
  const routing = runResponse(request, continued, (body, responsesChain) => {
    const unified = unifiedWithFields('responses', body, context, fields);
    inference = inferenceContext({ ...unified, responsesChain }, context);
    return runInference(inference);
  });
  const keep = (response: ResponseObject, providerId: string | undefined) =>
    context.waitUntil(
      (async () => {
        if (request.store === false) return putUnstoredMarker(workspaceId, response.id);
        const link = nativeLinkOf(await routing, request, providerId);
        return putStoredResponse(workspaceId, { response, input, history: continued.history, link });
      })().catch((error) => console.error(`Response ${response.id} could not be stored; GET and previous_response_id will not find it`, error)),
    );

  if (request.stream === true) {
    const answer = (await commitStreamWhileRouting(routing, inference, streamCommitDelayMs())) ?? routedResponse(await routing, context.recorder);
    if (answer.status < 200 || answer.status >= 300) return answer;
    const events = stampedEventStream(base, ({ response, providerId }) => keep(response ?? failedBeforeAnswer(base), providerId));
    // A short replay from the cache comes as one ready buffer.
    const core = isReadable(answer.body) ? answer.body : Readable.from([Buffer.from(answer.body)]);
    events.on('close', () => core.destroy());
    core.on('error', () => events.end());
    core.pipe(events);
    return {
      status: answer.status,
      headers: { ...answer.headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
      body: events,
    };
  }

  const answer = routedResponse(await routing, context.recorder);
  if (answer.status < 200 || answer.status >= 300) return answer;
  const { response, providerId } = stampedAnswer(JSON.parse((await bytesOf(answer.body)).toString('utf8')) as ResponseObject, base);
  keep(response, providerId);
  return { status: answer.status, headers: { ...answer.headers, 'content-type': 'application/json' }, body: JSON.stringify(response) };
}

function failedBeforeAnswer(base: ResponseObject): ResponseObject {
  return { ...base, status: 'failed', error: { code: 'server_error', message: 'The stream ended before the response was complete.' } };
}

/** The conversation a response continues: the earlier one's own history, its input, then its output. */
async function conversationBefore(workspaceId: string, previousId: string): Promise<Continued> {
  const previous = await readStored(workspaceId, previousId);
  if (previous === 'not_stored') {
    throw badRequest(
      `Response ${previousId} was made with store: false, so the gateway kept none of it to continue from; send the conversation in input instead.`,
      'previous_response_id',
      'previous_response_not_stored',
    );
  }
  if (!previous) {
    throw notFound(`Previous response with id ${JSON.stringify(previousId.slice(0, 100))} not found.`, 'previous_response_not_found');
  }
  return { history: [...previous.history, ...previous.input, ...(previous.response.output as ConversationItem[])], link: previous.link };
}

async function bytesOf(body: GatewayResponse['body']): Promise<Buffer> {
  if (typeof body === 'string') return Buffer.from(body);
  return Buffer.isBuffer(body) ? body : readBody(body as Readable, maxAnswerBytes, 'the chat completion');
}

/**
 * Waits between reads of a response that is not there yet: it is stored after its answer, so a
 * client that asks for it (or continues from it) at once may be a few milliseconds early. About a
 * second in all, which only a response that does not exist pays in full.
 */
const storeWaitsMs = [20, 40, 80, 160, 300, 400];

/** The stored response of a well-formed id, read again while it may still be being written. */
async function readStored(workspaceId: string, id: string): Promise<Stored | 'not_stored' | undefined> {
  if (!responseIdPattern.test(id)) return undefined;
  let stored = await getStoredResponse<Stored>(workspaceId, id);
  for (const waitMs of storeWaitsMs) {
    if (stored) return stored;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    stored = await getStoredResponse<Stored>(workspaceId, id);
  }
  return stored;
}

async function findStored(workspaceId: string, id: string): Promise<Stored> {
  const stored = await readStored(workspaceId, id);
  if (!stored || stored === 'not_stored') throw responseNotFound(id);
  return stored;
}

/** The include values the gateway knows; each adds what is left out of an object unless asked for. */
const includeValues = [
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'file_search_call.results',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
] as const;

/** `include` as the clients send it in a query: `include[]=…` (repeated), or `include=…`. */
function includeOf({ rawQuery }: RouteContext['request']): Set<string> {
  const params = new URLSearchParams(rawQuery);
  const values = [...params.getAll('include[]'), ...params.getAll('include')];
  for (const value of values) {
    if (!(includeValues as readonly string[]).includes(value)) {
      throw badRequest(`include may name ${includeValues.join(', ')}; got ${JSON.stringify(value.slice(0, 100))}.`, 'include', 'invalid_value');
    }
  }
  return new Set(values);
}

/** An input item as listed: an input image's URL only when `include` names it, as OpenAI's API does. */
function presentInputItem(item: ConversationItem, include: Set<string>): ConversationItem {
  if (item.type !== 'message' || typeof item.content === 'string' || include.has('message.input_image.image_url')) return item;
  return { ...item, content: item.content.map((part) => (part.type === 'input_image' ? { ...part, image_url: null } : part)) };
}

const responseIdParams = object({ responseId: string() });

const inputItemsQuery = object({
  limit: pipe(
    optional(string().check(refine((limit) => /^(100|[1-9][0-9]?)$/.test(limit), { error: 'limit must be an integer from 1 to 100.' }))),
    transform((limit): number => (limit === undefined ? 20 : Number(limit))),
  ),
  order: optional(enumOf(['asc', 'desc'], { error: 'order must be "asc" or "desc".' })),
  after: optional(string()),
  'include[]': optional(string()),
  include: optional(string()),
});

export const storedResponses = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/responses/{responseId}/cancel',
    role: 'member',
    params: responseIdParams,
    emptyBodyAllowed: true,
    async handler({ params }, { auth }) {
      const stored = await findStored(auth.workspaceId, params.responseId);
      if (!stored.response.background) {
        throw badRequest(
          `Response ${params.responseId} was not made with background: true; only a background response can be cancelled.`,
          'response_id',
          'invalid_request',
        );
      }
      if (!(await cancelStoredResponse(auth.workspaceId, params.responseId))) {
        throw new GatewayError(409, `Response ${params.responseId} is ${stored.response.status}; only a queued or in-progress response can be cancelled.`, {
          code: 'response_not_cancellable',
        });
      }
      return (await findStored(auth.workspaceId, params.responseId)).response;
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/responses/{responseId}',
    role: 'member',
    params: responseIdParams,
    async handler({ params }, context) {
      includeOf(context.request);
      return (await findStored(context.auth.workspaceId, params.responseId)).response;
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/responses/{responseId}',
    role: 'member',
    params: responseIdParams,
    async handler({ params }, { auth }) {
      const deleted = responseIdPattern.test(params.responseId) && (await deleteStoredResponse(auth.workspaceId, params.responseId));
      if (!deleted) throw responseNotFound(params.responseId);
      return { id: params.responseId, object: 'response.deleted', deleted: true };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/responses/{responseId}/input_items',
    role: 'member',
    params: responseIdParams,
    query: inputItemsQuery,
    async handler({ params, query }, context) {
      const include = includeOf(context.request);
      const stored = await findStored(context.auth.workspaceId, params.responseId);
      // Newest first unless asked otherwise, as OpenAI lists them.
      const items = query.order === 'asc' ? stored.input : [...stored.input].reverse();
      const start = query.after === undefined ? 0 : items.findIndex((item) => item.id === query.after) + 1;
      if (query.after !== undefined && start === 0)
        throw badRequest(`after must be the id of an input item of ${params.responseId}.`, 'after', 'invalid_cursor');
      const data = items.slice(start, start + query.limit).map((item) => presentInputItem(item, include));
      return {
        object: 'list',
        data,
        first_id: data[0]?.id ?? null,
        last_id: data.at(-1)?.id ?? null,
        has_more: start + query.limit < items.length,
      };
    },
  }),
);

export const responsesRoute: RouteHandler = async function responses(context: RouteContext): Promise<GatewayResponse> {
  const { method, resource } = context.request;
  if (resource === '/v1/responses') {
    if (method !== 'POST') throw new GatewayError(405, `/v1/responses takes POST, not ${method}.`, { code: 'method_not_allowed', headers: { allow: 'POST' } });
    return createResponse(context);
  }
  return storedResponses(context);
};
