/**
 * What the policy routes (`/v1/policies/rate-limits`, `/v1/policies/usage-limits`) share: the
 * condition and group keys, the workspace a policy is for, and the spec's list paging.
 */
import { array, enum as oneOf, maxLength, minLength, object, optional, refine, string, union, type ZodMiniType } from 'zod/mini';
import type { AuthContext } from '../auth/authenticate';
import { findWorkspace } from '../auth/workspaces';
import { badRequest, forbidden } from '../core/errors';
import { defineRoute, knownFields, messageAt, type ControlRoute } from '../http/define-route';
import { isPolicyKey } from '../ratelimit/policies';

const keyRule = 'api_key, workspace_id, provider, model, config, virtual_key, prompt or metadata.<key>';
const maxConditions = 20;
const maxConditionValues = 100;
// One message for both forms: a union names no branch, so it must state every limit itself.
const conditionValueRule = messageAt(`must be a non-empty string (or "*" for any request with the key), or a list of 1 to ${maxConditionValues} strings.`);

const condition = knownFields(
  {
    key: string(messageAt(`must be one of ${keyRule}.`)),
    value: union(
      [
        string(conditionValueRule).check(minLength(1, conditionValueRule)),
        array(string(conditionValueRule), conditionValueRule).check(minLength(1, conditionValueRule), maxLength(maxConditionValues, conditionValueRule)),
      ],
      conditionValueRule,
    ),
  },
  (field, at) => `${at} has no field "${field.slice(0, 100)}"; a condition takes key and value.`,
);
const conditionsRule = `conditions must be a list of 1 to ${maxConditions} {"key", "value"} objects.`;
export const conditions = array(condition, conditionsRule).check(minLength(1, conditionsRule), maxLength(maxConditions, conditionsRule));
const groupRule = `group_by must be a list of 1 to ${maxConditions} {"key"} objects.`;
export const groupBy = array(
  knownFields(
    { key: string(messageAt(`must be one of ${keyRule}.`)) },
    (field, at) => `${at} has no field "${field.slice(0, 100)}"; a group_by item takes key.`,
  ),
  groupRule,
).check(minLength(1, groupRule), maxLength(maxConditions, groupRule));

export const policyStatus = oneOf(['active', 'archived'], 'status must be active or archived.');
export const policyIdParams = object({ policyId: string() });

/** Every key of a policy's conditions and groups must be one the gateway can read from a request. */
export function checkKeys(conditionList: readonly { key: string }[], groups: readonly { key: string }[], code: string): void {
  for (const [list, items] of [
    ['conditions', conditionList],
    ['group_by', groups],
  ] as const) {
    items.forEach((item, index) => {
      const param = `${list}[${index}].key`;
      if (!isPolicyKey(item.key)) throw badRequest(`${param} "${item.key.slice(0, 100)}" is not a key the gateway reads; use one of ${keyRule}.`, param, code);
    });
  }
}

/**
 * The workspace a request names, or the key's own. Only an owner may name another workspace, and
 * only one of its organisation; anything else is a 403, not a 404, so nothing is learnt about it.
 */
export async function scopedWorkspace(auth: AuthContext, workspaceId: string | undefined): Promise<string> {
  if (workspaceId === undefined || workspaceId === auth.workspaceId) return auth.workspaceId;
  if (auth.role === 'owner' && (await findWorkspace(auth.organisationId, workspaceId.slice(0, 100)))) return workspaceId;
  throw forbidden('workspace_id must be the workspace of the gateway key (an owner key may name any workspace of its organisation).');
}

/** The workspace a new policy is for: its `organisation_id`, when given, must be the key's; its `workspace_id` as `scopedWorkspace` allows. */
export async function newPolicyWorkspace(auth: AuthContext, body: { workspace_id?: string; organisation_id?: string }): Promise<string> {
  if (body.organisation_id !== undefined && body.organisation_id !== auth.organisationId)
    throw forbidden('organisation_id must be the organisation of the gateway key.');
  return scopedWorkspace(auth, body.workspace_id);
}

/**
 * A `PUT` may send back the policy as it was read, `workspace_id` and `organisation_id` included,
 * but cannot move it: a policy stays in the workspace it was created for (as `POST` set it), so
 * naming another one is a 400 rather than a change silently left undone.
 */
export function checkUnmoved(auth: AuthContext, body: { workspace_id?: unknown; organisation_id?: unknown }, code: string): void {
  if (body.workspace_id !== undefined && body.workspace_id !== auth.workspaceId) {
    throw badRequest(
      'workspace_id cannot be changed: a policy stays in the workspace it was created for. Create the policy in the other workspace instead.',
      'workspace_id',
      code,
    );
  }
  if (body.organisation_id !== undefined && body.organisation_id !== auth.organisationId) {
    throw badRequest('organisation_id cannot be changed: a policy stays in the organisation it was created for.', 'organisation_id', code);
  }
}

const wholeNumber = (field: string) =>
  optional(
    string().check(refine((text) => /^\d{1,9}$/.test(text), { error: `${field} must be a whole number of at least 0.`, params: { code: 'invalid_page' } })),
  );

/** The spec's list query (`workspace_id`, `status`, `page_size`, `current_page`) with the filters of one kind of policy. */
export function policyListQuery<Shape extends Record<string, ZodMiniType>>(filters: Shape) {
  return object({
    workspace_id: optional(string()),
    status: optional(policyStatus),
    page_size: wholeNumber('page_size'),
    current_page: wholeNumber('current_page'),
    ...filters,
  });
}

const defaultPageSize = 50;

/** One page of the filtered list (`current_page` counts from 0) and how many the filter kept. */
export function policyPage<T>(matching: readonly T[], query: { page_size?: string; current_page?: string }): { page: T[]; total: number } {
  const size = query.page_size === undefined ? defaultPageSize : Number(query.page_size);
  const page = Number(query.current_page ?? 0);
  return { page: matching.slice(page * size, page * size + size), total: matching.length };
}

/**
 * `GET /{policyId}` (members) and `DELETE /{policyId}` (admins; archives it) of one kind of
 * policy: both kinds read and archive alike, and differ only in how they are shown.
 */
export function policyByIdRoutes<T>(
  path: string,
  store: {
    find(workspaceId: string, id: string): Promise<T | undefined>;
    change(workspaceId: string, id: string, change: { status: 'archived' }): Promise<T | undefined>;
  },
  notFound: (id: string) => Error,
  present: (policy: T) => unknown,
): ControlRoute[] {
  return [
    defineRoute({
      method: 'GET',
      path,
      role: 'member',
      params: policyIdParams,
      async handler({ params: { policyId } }, { auth }) {
        const policy = await store.find(auth.workspaceId, policyId);
        if (!policy) throw notFound(policyId);
        return present(policy);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path,
      role: 'admin',
      params: policyIdParams,
      async handler({ params: { policyId } }, { auth }) {
        const archived = await store.change(auth.workspaceId, policyId, { status: 'archived' });
        if (!archived) throw notFound(policyId);
        return present(archived);
      },
    }),
  ];
}
