import { array, maxLength, minLength, nullable, number, object, optional, partial, refine, string } from 'zod/mini';
import type { AuthContext } from '../auth/authenticate';
import {
  createJwtProvider,
  deleteJwtProvider,
  getJwtProvider,
  listJwtProviders,
  replaceJwtProvider,
  type JwtProviderFields,
  type JwtProviderItem,
} from '../auth/jwt-providers';
import { workspaceIdPattern } from '../auth/workspaces';
import { badRequest, GatewayError, notFound } from '../core/errors';
import { answerFields, controlRoutes, defineRoute, knownFields, messageAt } from '../http/define-route';
import { pageQuery } from '../http/pagination';
import { scopedWorkspace } from './policy-fields';

const invalidCode = 'invalid_jwt_provider_body';
const maxClockTolerance = 600;
const maxLogClaims = 10;

const providerNotFound = (id: string) => notFound(`No JWT identity provider ${id.slice(0, 100)} that this key may manage.`, 'jwt_provider_not_found');

const text = (rule: string, max: number) => string(messageAt(rule)).check(minLength(1, messageAt(rule)), maxLength(max, messageAt(rule)));
const claimRule = 'must be a claim name of 1 to 200 characters (a dotted name such as "realm_access.roles" reads a nested claim).';
const claimName = text(claimRule, 200).check(refine((value) => value.trim() === value, messageAt(claimRule)));

/** An https URL without credentials; plain http only locally (a key set read in the clear could be swapped on the way). */
const isKeySetUrl = (value: string) => {
  try {
    const url = new URL(value);
    const secure = url.protocol === 'https:' || (url.protocol === 'http:' && process.env.GATEWAY_MODE === 'local');
    return secure && url.username === '' && url.password === '';
  } catch {
    return false;
  }
};

const shape = {
  issuer: text('must be the issuer (the "iss" of its tokens), a string of 1 to 1,000 characters.', 1_000),
  jwks_uri: text('must be the https URL of the provider\'s JSON Web Key Set (its "jwks_uri").', 2_000).check(
    refine(
      isKeySetUrl,
      messageAt('must be an https URL without credentials, e.g. "https://login.example.com/.well-known/jwks.json" (plain http only in local mode).'),
    ),
  ),
  audience: text('must be the audience its tokens carry in "aud", a string of 1 to 1,000 characters.', 1_000),
  workspace_id: nullable(
    string(messageAt('must be a workspace id (ws_…).')).check(refine((value) => workspaceIdPattern.test(value), messageAt('must be a workspace id (ws_…).'))),
  ),
  workspace_claim: nullable(claimName),
  scopes_claim: claimName,
  roles_claim: claimName,
  clock_tolerance_s: number(messageAt(`must be a whole number of seconds from 0 to ${maxClockTolerance}.`)).check(
    refine(
      (value) => Number.isInteger(value) && value >= 0 && value <= maxClockTolerance,
      messageAt(`must be a whole number of seconds from 0 to ${maxClockTolerance}.`),
    ),
  ),
  log_claims: array(claimName, messageAt(`must be a list of at most ${maxLogClaims} claim names.`)).check(
    maxLength(maxLogClaims, messageAt(`must be a list of at most ${maxLogClaims} claim names.`)),
  ),
};

const unknownField = (field: string) =>
  `Unknown field "${field.slice(0, 100)}"; a JWT provider takes issuer, jwks_uri, audience, workspace_id or workspace_claim, scopes_claim, roles_claim, clock_tolerance_s and log_claims.`;

const answered = answerFields(['object', 'id', 'organisation_id', 'created_at', 'updated_at']);

const createBody = knownFields(
  {
    issuer: shape.issuer,
    jwks_uri: shape.jwks_uri,
    audience: shape.audience,
    workspace_id: optional(shape.workspace_id),
    workspace_claim: optional(shape.workspace_claim),
    scopes_claim: optional(shape.scopes_claim),
    roles_claim: optional(shape.roles_claim),
    clock_tolerance_s: optional(shape.clock_tolerance_s),
    log_claims: optional(shape.log_claims),
    ...answered,
  },
  unknownField,
);

/** A PUT changes the fields it sends; the others keep their stored values. */
const updateBody = partial(createBody);

type Body = Partial<{ [K in keyof JwtProviderFields]: JwtProviderFields[K] | null }>;

const defaults = { scopes_claim: 'scope', roles_claim: 'roles', clock_tolerance_s: 30, log_claims: [] as string[] };

/**
 * Where the provider's tokens act: a fixed workspace (`workspace_id`; the key's own unless an owner
 * names another of the organisation) or, for owners only, the workspace a claim of each token names.
 */
async function placement(auth: AuthContext, body: Body, current?: JwtProviderItem): Promise<Pick<JwtProviderFields, 'workspace_id' | 'workspace_claim'>> {
  const claimGiven = body.workspace_claim !== undefined && body.workspace_claim !== null;
  const workspaceGiven = body.workspace_id !== undefined && body.workspace_id !== null;
  if (claimGiven && workspaceGiven)
    throw badRequest('Send workspace_id or workspace_claim, not both: a token acts in one workspace.', 'workspace_claim', invalidCode);
  if (claimGiven) {
    if (auth.role !== 'owner')
      throw new GatewayError(403, 'Only an owner key may register an organisation-wide provider (workspace_claim); an admin registers one for its workspace.', {
        code: 'owner_required',
        param: 'workspace_claim',
      });
    return { workspace_id: null, workspace_claim: body.workspace_claim! };
  }
  if (workspaceGiven) return { workspace_id: await scopedWorkspace(auth, body.workspace_id!), workspace_claim: null };
  if (current && body.workspace_id === undefined && body.workspace_claim === undefined)
    return { workspace_id: current.workspace_id, workspace_claim: current.workspace_claim };
  return { workspace_id: auth.workspaceId, workspace_claim: null };
}

function fieldsOf(
  body: Body,
  base: Omit<JwtProviderFields, 'workspace_id' | 'workspace_claim'>,
  where: Pick<JwtProviderFields, 'workspace_id' | 'workspace_claim'>,
): JwtProviderFields {
  return {
    issuer: body.issuer ?? base.issuer,
    jwks_uri: body.jwks_uri ?? base.jwks_uri,
    audience: body.audience ?? base.audience,
    scopes_claim: body.scopes_claim ?? base.scopes_claim,
    roles_claim: body.roles_claim ?? base.roles_claim,
    clock_tolerance_s: body.clock_tolerance_s ?? base.clock_tolerance_s,
    log_claims: body.log_claims ?? base.log_claims,
    ...where,
  };
}

/**
 * `/v1/auth/jwt-providers`: the identity providers whose JWTs authenticate requests (docs/jwt.md).
 * Owners manage every provider of the organisation, organisation-wide ones (`workspace_claim`)
 * included; admins the ones of their workspace. Requests pick up a change within 5 s.
 */
export const jwtProvidersRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/auth/jwt-providers',
    role: 'admin',
    body: createBody,
    invalidCode,
    async handler({ body }, { auth }) {
      const where = await placement(auth, body);
      const base = { issuer: body.issuer, jwks_uri: body.jwks_uri, audience: body.audience, ...defaults };
      return present(await createJwtProvider(auth, fieldsOf(body, base, where)));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/auth/jwt-providers',
    role: 'admin',
    query: pageQuery(),
    async handler({ query }, { auth }) {
      const all = await listJwtProviders(auth);
      const start = query.after ? all.findIndex((provider) => provider.id < query.after!) : 0;
      const rest = start < 0 ? [] : all.slice(start);
      const data = rest.slice(0, query.limit).map(present);
      return { object: 'list', data, has_more: rest.length > query.limit, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/auth/jwt-providers/{providerId}',
    role: 'admin',
    params: object({ providerId: string() }),
    async handler({ params: { providerId } }, { auth }) {
      const found = await getJwtProvider(auth, providerId.slice(0, 200));
      if (!found) throw providerNotFound(providerId);
      return present(found);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/auth/jwt-providers/{providerId}',
    role: 'admin',
    params: object({ providerId: string() }),
    body: updateBody,
    emptyBodyAllowed: true,
    invalidCode,
    async handler({ params: { providerId }, body }, { auth }) {
      const current = await getJwtProvider(auth, providerId.slice(0, 200));
      if (!current) throw providerNotFound(providerId);
      const where = await placement(auth, body, current);
      return present(await replaceJwtProvider(current, fieldsOf(body, current, where)));
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/auth/jwt-providers/{providerId}',
    role: 'admin',
    params: object({ providerId: string() }),
    async handler({ params: { providerId } }, { auth }) {
      const current = await getJwtProvider(auth, providerId.slice(0, 200));
      if (!current || !(await deleteJwtProvider(current))) throw providerNotFound(providerId);
      return { object: 'jwt_provider', id: current.id, deleted: true };
    },
  }),
);

function present(provider: JwtProviderItem) {
  return {
    object: 'jwt_provider',
    id: provider.id,
    organisation_id: provider.organisation_id,
    issuer: provider.issuer,
    jwks_uri: provider.jwks_uri,
    audience: provider.audience,
    workspace_id: provider.workspace_id,
    workspace_claim: provider.workspace_claim,
    scopes_claim: provider.scopes_claim,
    roles_claim: provider.roles_claim,
    clock_tolerance_s: provider.clock_tolerance_s,
    log_claims: provider.log_claims,
    created_at: provider.created_at,
    updated_at: provider.updated_at,
  };
}
