/**
 * Control routes as data. `defineRoute` describes one method on one API Gateway resource: the least
 * role a key needs, zod schemas (`zod/mini`) for its path parameters, query and JSON body, and a
 * handler that gets them parsed and answers with the JSON body of a 200. `controlRoutes` makes a
 * function's RouteHandler of its definitions. The definitions are also what serverless.yml's http
 * events are checked against, and what an OpenAPI document is to be generated from.
 *
 * Input the schemas refuse is a 400 in the gateway's error shape: `param` is the field's path
 * (`deployments[0].alias`), the message is the schema's own and says what to send, and the code is
 * the route's `invalidCode` unless the failing check names its own (`params: { code }`). A schema
 * may also throw a GatewayError, for a verdict that is not a 400: a path id that cannot name
 * anything is a 404, found before the body is read.
 */
import { optional, strictObject, unknown, type core, type ZodMiniType } from 'zod/mini';
import type { Role } from '../auth/api-keys';
import { requireAdmin, requireOwner } from '../auth/authenticate';
import { badRequest, GatewayError, notFound } from '../core/errors';
import { readJsonObject } from './json-body';
import type { RouteContext, RouteHandler } from './pipeline';
import { jsonResponse } from './responses';
import type { GatewayRequest, GatewayResponse } from './types';

export type ControlMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Who may call a route: any key of at least this role, or (`public`) anyone, with no key read at all. */
export type Access = Role | 'public';

type Schema = ZodMiniType;
type Parsed<S, Absent> = S extends Schema ? core.output<S> : Absent;

export interface RouteInput<P, Q, B> {
  params: Parsed<P, Record<string, never>>;
  query: Parsed<Q, Record<string, never>>;
  body: Parsed<B, undefined>;
}

export interface RouteSpec<P extends Schema | undefined, Q extends Schema | undefined, B extends Schema | undefined> {
  method: ControlMethod;
  /** The API Gateway resource as serverless.yml declares it, e.g. `/v1/configs/{configId}`. */
  path: string;
  /**
   * The least role a key needs: `member` is any key of the workspace; owners pass wherever admins do.
   * A `public` route gets no caller: its answer must be the same for everyone and hold no secret.
   */
  role: Access;
  /** Path parameters: strings, decoded once by API Gateway. */
  params?: P;
  /** Query parameters: strings; names the schema does not list are ignored. */
  query?: Q;
  /** The JSON object body. A route without one never reads the body. */
  body?: B;
  /** An empty body reads as `{}` (no content type needed), so the schema alone says what is required. */
  emptyBodyAllowed?: boolean;
  /** The `code` of a 400 for input the schemas refuse. */
  invalidCode?: string;
  handler(input: RouteInput<P, Q, B>, context: RouteContext): Promise<unknown>;
}

/** A defined route: what it accepts, and how it runs once the request is known to be for it. */
export interface ControlRoute {
  readonly method: ControlMethod;
  readonly path: string;
  readonly role: Access;
  readonly params?: Schema;
  readonly query?: Schema;
  readonly body?: Schema;
  readonly emptyBodyAllowed?: boolean;
  run(context: RouteContext): Promise<GatewayResponse>;
}

/** A function's RouteHandler, carrying the routes it serves. */
export type ControlRoutes = RouteHandler & { readonly routes: readonly ControlRoute[] };

export function defineRoute<P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined>(
  spec: RouteSpec<P, Q, B>,
): ControlRoute {
  const { method, path, role, params, query, body, emptyBodyAllowed = false, invalidCode = 'invalid_request', handler } = spec;
  return {
    method,
    path,
    role,
    params,
    query,
    body,
    emptyBodyAllowed,
    async run(context) {
      // Roles first: a member learns nothing about an admin route's input rules.
      if (role === 'owner') requireOwner(context.auth, `use ${method} ${path}`);
      else if (role === 'admin') requireAdmin(context.auth);
      const { request } = context;
      const input = {
        params: params ? parse(params, request.pathParameters, invalidCode) : {},
        query: query ? parse(query, request.query, invalidCode) : {},
        body: body ? parse(body, readJsonObject(request, { optional: emptyBodyAllowed }), invalidCode) : undefined,
      };
      return jsonResponse(200, await handler(input as RouteInput<P, Q, B>, context));
    },
  };
}

/**
 * Dispatches on the resource API Gateway matched and the method. API Gateway only invokes a function
 * for the routes serverless.yml gives it, so the 404 and 405 here answer a template that drifted
 * from the definitions, or a direct invocation.
 */
export function controlRoutes(...routes: ControlRoute[]): ControlRoutes {
  const byPath = new Map<string, Map<string, ControlRoute>>();
  for (const route of routes) {
    const methods = byPath.get(route.path) ?? new Map<string, ControlRoute>();
    if (methods.has(route.method)) throw new Error(`${route.method} ${route.path} is defined twice.`);
    byPath.set(route.path, methods.set(route.method, route));
  }
  const handle = async (context: RouteContext) => {
    const { method, path, resource } = context.request;
    const methods = byPath.get(resource);
    if (!methods) throw notFound(`No route for ${method} ${path}.`, 'route_not_found');
    const route = methods.get(method);
    if (!route) {
      const allow = [...methods.keys()].join(', ');
      throw new GatewayError(405, `${resource} takes ${allow}, not ${method}.`, { code: 'method_not_allowed', headers: { allow } });
    }
    return route.run(context);
  };
  const isPublic = ({ method, resource }: GatewayRequest) => byPath.get(resource)?.get(method)?.role === 'public';
  return Object.assign(handle, { routes, isPublic });
}

/**
 * A JSON object that refuses fields its shape does not list. `unknownField` gets the first unknown
 * field and the object's own param (empty for the body) and says what the object takes instead.
 */
export function knownFields<Shape extends core.$ZodLooseShape>(shape: Shape, unknownField: (field: string, at: string) => string) {
  return strictObject(shape, {
    error: (issue) => {
      const at = paramOf(issue.path ?? []);
      return issue.code === 'unrecognized_keys' ? unknownField(issue.keys[0]!, at) : `${at || 'The request body'} must be an object.`;
    },
  });
}

/** A shape with one schema per listed field, for objects whose fields are kept in a list elsewhere. */
export function eachField<const Field extends string, S extends Schema>(fields: readonly Field[], schema: (field: Field) => S): Record<Field, S> {
  return Object.fromEntries(fields.map((field) => [field, schema(field)])) as Record<Field, S>;
}

/** Fields of an answer that an edited copy of it may send back: accepted, and ignored. */
export const answerFields = <const Field extends string>(fields: readonly Field[]) => eachField(fields, () => optional(unknown()));

/**
 * A schema's message led by the path of the value it refuses (`checks[2].id must be …`): in a list,
 * or in an object that appears in several places, the path is what says which value to fix.
 */
export const messageAt = (rule: string) => ({ error: (issue: { path?: PropertyKey[] }) => `${paramOf(issue.path ?? [])} ${rule}` });

/** `['deployments', 0, 'alias']` → `deployments[0].alias`. */
export function paramOf(path: readonly PropertyKey[]): string {
  return path.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`)).join('');
}

function parse<S extends Schema>(schema: S, input: unknown, invalidCode: string): core.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalidInput(result.error.issues, invalidCode);
}

/** Longer names are cut in `param`; the message the schema wrote decides how much of one it shows. */
const maxParamKeyLength = 100;

/**
 * The 400 for the first issue, except that an object's unknown fields come before what is wrong
 * with its known ones: a misspelt field often explains the missing one.
 */
function invalidInput(issues: readonly core.$ZodIssue[], invalidCode: string): GatewayError {
  const first = issues[0]!;
  const unknownFields = issues.filter((issue) => issue.code === 'unrecognized_keys' && startsWith(first.path, issue.path));
  const issue = unknownFields.sort((a, b) => a.path.length - b.path.length)[0] ?? first;
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!.slice(0, maxParamKeyLength)] : issue.path;
  const ownCode = issue.code === 'custom' ? issue.params?.code : undefined;
  return badRequest(issue.message, path.length > 0 ? paramOf(path) : null, typeof ownCode === 'string' ? ownCode : invalidCode);
}

function startsWith(path: readonly PropertyKey[], prefix: readonly PropertyKey[]): boolean {
  return prefix.length <= path.length && prefix.every((key, index) => path[index] === key);
}
