import { array, boolean, maxLength, object, optional, pipe, refine, string, transform } from 'zod/mini';
import { describe, expect, it } from 'vitest';
import type { Role } from '../../lib/auth/api-keys';
import { notFound } from '../../lib/core/errors';
import { answerFields, controlRoutes, defineRoute, knownFields } from '../../lib/http/define-route';
import { listEnvelope, pageQuery } from '../../lib/http/pagination';
import type { RouteContext } from '../../lib/http/pipeline';
import { RequestRecorder } from '../../lib/observability/request-recorder';

interface Call {
  method: string;
  resource: string;
  path?: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  contentType?: string | null;
  role?: Role;
}

function context({ method, resource, path = resource, params = {}, query = {}, body, contentType = 'application/json', role = 'admin' }: Call): RouteContext {
  return {
    request: {
      method,
      path,
      resource,
      rawQuery: '',
      query,
      headers: contentType === null ? {} : { 'content-type': contentType },
      pathParameters: params,
      body: Buffer.from(body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body)),
      requestId: 'req',
      receivedAt: 0,
    },
    auth: { keyId: 'key_1', role, organisationId: 'org_1', workspaceId: 'ws_1' },
    trace: { traceId: 'trace', spanId: undefined, parentSpanId: undefined, spanName: undefined, metadata: undefined } as unknown as RouteContext['trace'],
    recorder: new RequestRecorder('log_1'),
    waitUntil: () => {},
  };
}

const seen: unknown[] = [];

const widget = knownFields(
  {
    name: string({ error: (issue) => (issue.input === undefined ? 'name is required: the widget’s name.' : 'name must be a string.') }),
    size: optional(
      string().check(refine((size) => size === 'small' || size === 'large', { error: 'size must be "small" or "large".', params: { code: 'invalid_size' } })),
    ),
    parts: optional(
      array(
        knownFields(
          { label: string('label must be a string.'), shiny: optional(boolean('shiny must be true or false.')) },
          (field, at) => `Unknown field "${field}" in ${at}.`,
        ),
      ).check(maxLength(2, 'parts holds at most 2 parts.')),
    ),
    ...answerFields(['id', 'object']),
  },
  (field) => `Unknown field "${field}"; a widget takes name, size and parts.`,
);

const widgets = controlRoutes(
  defineRoute({
    method: 'GET',
    path: '/v1/widgets',
    role: 'member',
    query: pageQuery(),
    handler: async ({ query }) => {
      seen.push(query);
      return listEnvelope({ data: [{ id: 'wdg_2' }, { id: 'wdg_1' }], has_more: true }, (item) => ({ object: 'widget', ...item }));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/widgets',
    role: 'admin',
    body: widget,
    invalidCode: 'invalid_widget_body',
    handler: async ({ body }, { auth }) => ({ object: 'widget', name: body.name, workspace: auth.workspaceId }),
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/widgets/{widgetId}/copies',
    role: 'member',
    emptyBodyAllowed: true,
    body: knownFields({ note: optional(string('note must be a string.')) }, (field) => `Unknown field "${field}".`),
    params: object({
      widgetId: pipe(
        string(),
        transform((id) => {
          if (!id.startsWith('wdg_')) throw notFound(`No widget ${id}.`, 'widget_not_found');
          return { id };
        }),
      ),
    }),
    handler: async ({ params, body }) => ({ copied: params.widgetId.id, note: body.note ?? null }),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/widgets/{widgetId}',
    role: 'admin',
    params: object({ widgetId: string() }),
    handler: async ({ params }) => ({ id: params.widgetId, deleted: true }),
  }),
);

async function answer(call: Call) {
  const response = await widgets(context(call));
  return { status: response.status, headers: response.headers, body: JSON.parse(String(response.body)) };
}

async function refusal(call: Call) {
  try {
    await widgets(context(call));
  } catch (error) {
    return error as { status: number; message: string; param: string | null; code: string | null; type: string; headers?: Record<string, string> };
  }
  throw new Error(`${call.method} ${call.resource} was answered`);
}

describe('defineRoute and controlRoutes', () => {
  it('answers the handler’s value as a JSON 200, with the parsed input and the caller', async () => {
    expect(await answer({ method: 'POST', resource: '/v1/widgets', body: { name: 'w', id: 'wdg_1', object: 'widget' } })).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: { object: 'widget', name: 'w', workspace: 'ws_1' },
    });
    expect((await answer({ method: 'POST', resource: '/v1/widgets/{widgetId}/copies', params: { widgetId: 'wdg_1' } })).body).toEqual({
      copied: 'wdg_1',
      note: null,
    });
    expect((await answer({ method: 'DELETE', resource: '/v1/widgets/{widgetId}', params: { widgetId: 'wdg_9' }, body: '{not json' })).body).toEqual({
      id: 'wdg_9',
      deleted: true,
    });
  });

  it('dispatches on the resource API Gateway matched: 404 for another resource, 405 naming the methods for another method', async () => {
    expect(await refusal({ method: 'GET', resource: '/v1/gadgets', path: '/v1/gadgets' })).toMatchObject({
      status: 404,
      type: 'not_found_error',
      code: 'route_not_found',
      param: null,
      message: 'No route for GET /v1/gadgets.',
    });
    const wrongMethod = await refusal({ method: 'PATCH', resource: '/v1/widgets' });
    expect(wrongMethod).toMatchObject({ status: 405, type: 'invalid_request_error', code: 'method_not_allowed', headers: { allow: 'GET, POST' } });
    expect(wrongMethod.message).toMatch(/GET, POST/);
  });

  it('refuses a definition given twice', () => {
    const route = defineRoute({ method: 'GET', path: '/v1/widgets', role: 'member', handler: async () => ({}) });
    expect(() => controlRoutes(route, route)).toThrow(/GET \/v1\/widgets is defined twice/);
  });

  it('checks the role before reading anything the caller sent', async () => {
    for (const call of [
      { method: 'POST', resource: '/v1/widgets', body: { bad: true } },
      { method: 'POST', resource: '/v1/widgets', body: 'not json', contentType: 'text/plain' },
      { method: 'DELETE', resource: '/v1/widgets/{widgetId}', params: { widgetId: 'x' } },
    ]) {
      expect(await refusal({ ...call, role: 'member' }), call.method).toMatchObject({ status: 403, type: 'permission_error', code: 'admin_required' });
    }
    expect((await answer({ method: 'GET', resource: '/v1/widgets', role: 'member' })).status).toBe(200);
  });

  it('lets owners through admin routes, and only owners through owner routes', async () => {
    expect((await answer({ method: 'DELETE', resource: '/v1/widgets/{widgetId}', params: { widgetId: 'wdg_1' }, role: 'owner' })).status).toBe(200);
    const archive = controlRoutes(defineRoute({ method: 'POST', path: '/v1/archives', role: 'owner', handler: async () => ({ archived: true }) }));
    const call = (role: Role) => archive(context({ method: 'POST', resource: '/v1/archives', role }));
    expect((await call('owner')).status).toBe(200);
    for (const role of ['admin', 'member'] as const) {
      await expect(call(role), role).rejects.toMatchObject({ status: 403, code: 'owner_required', message: expect.stringContaining('POST /v1/archives') });
    }
  });

  it('answers input the schemas refuse with a 400 naming the field, the schema’s message and the route’s code', async () => {
    const refused = (body: unknown) => refusal({ method: 'POST', resource: '/v1/widgets', body });
    expect(await refused({})).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      param: 'name',
      code: 'invalid_widget_body',
      message: 'name is required: the widget’s name.',
    });
    expect(await refused({ name: 7 })).toMatchObject({ param: 'name', message: 'name must be a string.' });
    expect(await refused({ name: 'w', parts: [{ label: 'a' }, { label: 5 }] })).toMatchObject({ param: 'parts[1].label', message: 'label must be a string.' });
    expect(await refused({ name: 'w', parts: [{ label: 'a', glow: 1 }] })).toMatchObject({
      param: 'parts[0].glow',
      message: 'Unknown field "glow" in parts[0].',
    });
    expect(await refused({ name: 'w', parts: [{ label: 'a' }, { label: 'b' }, { label: 'c' }] })).toMatchObject({
      param: 'parts',
      message: 'parts holds at most 2 parts.',
    });
  });

  it('reports an object’s unknown fields before what is wrong with its known ones', async () => {
    const refused = await refusal({ method: 'POST', resource: '/v1/widgets', body: { colour: 'red', parts: 'x', nmae: 'w' } });
    expect(refused).toMatchObject({ param: 'colour', code: 'invalid_widget_body', message: 'Unknown field "colour"; a widget takes name, size and parts.' });
    const long = 'f'.repeat(300);
    expect((await refusal({ method: 'POST', resource: '/v1/widgets', body: { name: 'w', [long]: 1 } })).param).toBe(long.slice(0, 100));
  });

  it('uses the code a failing check names instead of the route’s', async () => {
    expect(await refusal({ method: 'POST', resource: '/v1/widgets', body: { name: 'w', size: 'huge' } })).toMatchObject({
      status: 400,
      param: 'size',
      code: 'invalid_size',
      message: 'size must be "small" or "large".',
    });
  });

  it('answers what a schema throws as it is: a path id that names nothing is a 404 before the body is read', async () => {
    expect(await refusal({ method: 'POST', resource: '/v1/widgets/{widgetId}/copies', params: { widgetId: 'nope' }, body: { note: 5 } })).toMatchObject({
      status: 404,
      code: 'widget_not_found',
      message: 'No widget nope.',
    });
  });

  it('reads bodies with the gateway’s JSON reader, an empty one as {} where the route allows it', async () => {
    expect(await refusal({ method: 'POST', resource: '/v1/widgets', body: { name: 'w' }, contentType: 'text/plain' })).toMatchObject({ status: 415 });
    expect(await refusal({ method: 'POST', resource: '/v1/widgets', contentType: null })).toMatchObject({ status: 415 });
    expect(await refusal({ method: 'POST', resource: '/v1/widgets', body: '[1]' })).toMatchObject({ status: 400, code: 'invalid_json' });
    const copies = { method: 'POST', resource: '/v1/widgets/{widgetId}/copies', params: { widgetId: 'wdg_1' }, contentType: null };
    expect((await answer(copies)).body).toEqual({ copied: 'wdg_1', note: null });
    expect(await refusal({ ...copies, contentType: 'application/json', body: { note: 1 } })).toMatchObject({
      status: 400,
      param: 'note',
      code: 'invalid_request',
    });
  });
});

describe('pageQuery and listEnvelope', () => {
  const list = async (query: Record<string, string>) => {
    seen.length = 0;
    await answer({ method: 'GET', resource: '/v1/widgets', query });
    return seen[0];
  };

  it('reads limit (default 20) and after, and ignores other parameters', async () => {
    expect(await list({})).toEqual({ limit: 20 });
    expect(await list({ limit: '100', after: 'wdg_01jd3', other: 'x' })).toEqual({ limit: 100, after: 'wdg_01jd3' });
    expect(await list({ after: '' })).toEqual({ limit: 20, after: undefined });
    expect(pageQuery(100).parse({})).toEqual({ limit: 100 });
    // Query names are the client's: the request's map has no prototype, and may hold `__proto__`.
    expect(pageQuery().parse(Object.assign(Object.create(null), JSON.parse('{"limit": "7", "__proto__": "x"}')))).toEqual({ limit: 7 });
  });

  it('refuses a limit outside 1–100 and a cursor that is not an id, with their own codes', async () => {
    for (const limit of ['0', '101', '1.5', 'ten', '']) {
      expect(await refusal({ method: 'GET', resource: '/v1/widgets', query: { limit } }), limit).toMatchObject({
        status: 400,
        param: 'limit',
        code: 'invalid_limit',
        message: 'limit must be an integer from 1 to 100.',
      });
    }
    for (const after of ['WDG_1', 'wdg', 'x'.repeat(100)]) {
      expect(await refusal({ method: 'GET', resource: '/v1/widgets', query: { after } }), after).toMatchObject({
        status: 400,
        param: 'after',
        code: 'invalid_cursor',
      });
    }
  });

  it('wraps a page in the list envelope, newest first, with the cursors', async () => {
    expect((await answer({ method: 'GET', resource: '/v1/widgets' })).body).toEqual({
      object: 'list',
      data: [
        { object: 'widget', id: 'wdg_2' },
        { object: 'widget', id: 'wdg_1' },
      ],
      has_more: true,
      first_id: 'wdg_2',
      last_id: 'wdg_1',
    });
    expect(listEnvelope({ data: [], has_more: false })).toEqual({ object: 'list', data: [], has_more: false, first_id: null, last_id: null });
  });
});
