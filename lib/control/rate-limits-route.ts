import { array, enum as oneOf, maxLength, minLength, number, object, optional, refine, string, union } from 'zod/mini';
import type { AuthContext } from '../auth/authenticate';
import { findWorkspace } from '../auth/workspaces';
import { badRequest, forbidden, notFound } from '../core/errors';
import { answerFields, controlRoutes, defineRoute, knownFields } from '../http/define-route';
import { changePolicy, createPolicy, findPolicy, isPolicyKey, listPolicies, type PolicyCondition, type RateLimitPolicy } from '../ratelimit/policies';

const policyObject = 'policy_usage_limits';
const invalidCode = 'invalid_rate_limit_policy';
const policyNotFound = (id: string) => notFound(`No rate-limit policy ${id.slice(0, 100)} in this workspace.`, 'policy_not_found');

const keyRule = 'api_key, workspace_id, provider, model, config, virtual_key, prompt or metadata.<key>';
const invalidName = 'name must be a string of at most 255 characters.';
const invalidValue = 'value must be a whole number of at least 1.';
const conditionValueRule = 'A condition value must be a string (or "*" for any request with the key), or a list of strings.';
const maxConditions = 20;
const maxConditionValues = 100;

const value = number(invalidValue).check(refine((n) => Number.isSafeInteger(n) && n >= 1, invalidValue));
const name = string(invalidName).check(maxLength(255, invalidName));
const condition = knownFields(
  {
    key: string(`A condition key must be one of ${keyRule}.`),
    value: union([string(conditionValueRule).check(minLength(1, conditionValueRule)), array(string(conditionValueRule), conditionValueRule).check(minLength(1, conditionValueRule), maxLength(maxConditionValues, `A condition takes at most ${maxConditionValues} values.`))], {
      error: conditionValueRule,
    }),
  },
  (field) => `Unknown field "${field}"; a condition takes key and value.`,
);
const conditionsRule = `conditions must be a list of 1 to ${maxConditions} {"key", "value"} objects.`;
export const conditions = array(condition, conditionsRule).check(minLength(1, conditionsRule), maxLength(maxConditions, conditionsRule));
const groupRule = `group_by must be a list of 1 to ${maxConditions} {"key"} objects.`;
export const groupBy = array(knownFields({ key: string(`A group_by key must be one of ${keyRule}.`) }, (field) => `Unknown field "${field}"; a group_by item takes key.`), groupRule).check(
  minLength(1, groupRule),
  maxLength(maxConditions, groupRule),
);

const createBody = knownFields(
  {
    conditions,
    group_by: groupBy,
    type: oneOf(['requests', 'tokens'], 'type must be requests or tokens.'),
    unit: oneOf(['rpm', 'rph', 'rpd'], 'unit must be rpm, rph or rpd.'),
    value,
    name: optional(name),
    workspace_id: optional(string('workspace_id must be a string.')),
    organisation_id: optional(string('organisation_id must be a string.')),
  },
  (field) => `Unknown field "${field}"; a rate-limit policy takes conditions, group_by, type, unit, value, name, workspace_id and organisation_id.`,
);

const updateBody = knownFields(
  {
    value: optional(value),
    name: optional(name),
    conditions: optional(conditions),
    group_by: optional(groupBy),
    status: optional(oneOf(['active', 'archived'], 'status must be active or archived.')),
    ...answerFields(['id', 'object', 'type', 'unit', 'workspace_id', 'organisation_id', 'created_at', 'last_updated_at']),
  },
  (field) => `Unknown field "${field}"; an update takes value, name, conditions, group_by and status.`,
);

const wholeNumber = (field: string, least: number) =>
  optional(string().check(refine((text) => /^\d{1,9}$/.test(text) && Number(text) >= least, { error: `${field} must be a whole number of at least ${least}.`, params: { code: 'invalid_page' } })));

const listQuery = object({
  workspace_id: optional(string()),
  status: optional(oneOf(['active', 'archived'], 'status must be active or archived.')),
  type: optional(oneOf(['requests', 'tokens'], 'type must be requests or tokens.')),
  unit: optional(oneOf(['rpm', 'rph', 'rpd'], 'unit must be rpm, rph or rpd.')),
  page_size: wholeNumber('page_size', 0),
  current_page: wholeNumber('current_page', 0),
});

const defaultPageSize = 50;
const idParams = object({ policyId: string() });

/**
 * `/v1/policies/rate-limits`: a workspace's rate-limit policies (the spec's shapes).
 *
 * - `POST` `{conditions, group_by, type, unit, value, name?, workspace_id?, organisation_id?}` (admin) → `{id, object}`.
 * - `GET ?workspace_id&status&type&unit&page_size&current_page` → `{object: "list", data, total}`.
 * - `GET /{policyId}`; `PUT /{policyId}` `{value?, name?, conditions?, group_by?, status?}` (admin);
 *   `DELETE /{policyId}` archives it (admin).
 *
 * Requests see a new, changed or archived policy within the hot path's cache TTL (5 s).
 */
export const rateLimitsRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/policies/rate-limits',
    role: 'admin',
    body: createBody,
    invalidCode,
    async handler({ body }, { auth }) {
      if (body.organisation_id !== undefined && body.organisation_id !== auth.organisationId) throw forbidden('organisation_id must be the organisation of the gateway key.');
      const workspaceId = await scopedWorkspace(auth, body.workspace_id);
      checkKeys(body.conditions, body.group_by);
      const policy = await createPolicy(
        { workspaceId, organisationId: auth.organisationId },
        { type: body.type, unit: body.unit, value: body.value, name: body.name, conditions: body.conditions as PolicyCondition[], group_by: body.group_by },
      );
      return { id: policy.id, object: policyObject };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/policies/rate-limits',
    role: 'member',
    query: listQuery,
    invalidCode,
    async handler({ query }, { auth }) {
      const workspaceId = await scopedWorkspace(auth, query.workspace_id);
      const status = query.status ?? 'active';
      const matching = (await listPolicies(workspaceId)).filter((policy) => policy.status === status && (!query.type || policy.type === query.type) && (!query.unit || policy.unit === query.unit));
      const size = query.page_size === undefined ? defaultPageSize : Number(query.page_size);
      const page = Number(query.current_page ?? 0);
      return { object: 'list', data: matching.slice(page * size, page * size + size).map(present), total: matching.length };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/policies/rate-limits/{policyId}',
    role: 'member',
    params: idParams,
    async handler({ params: { policyId } }, { auth }) {
      const policy = await findPolicy(auth.workspaceId, policyId);
      if (!policy) throw policyNotFound(policyId);
      return present(policy);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/policies/rate-limits/{policyId}',
    role: 'admin',
    params: idParams,
    body: updateBody,
    invalidCode,
    async handler({ params: { policyId }, body }, { auth }) {
      if (body.conditions || body.group_by) checkKeys(body.conditions ?? [], body.group_by ?? []);
      const changed = await changePolicy(auth.workspaceId, policyId, {
        value: body.value,
        name: body.name,
        conditions: body.conditions as PolicyCondition[] | undefined,
        group_by: body.group_by,
        status: body.status,
      });
      if (!changed) throw policyNotFound(policyId);
      return present(changed);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/policies/rate-limits/{policyId}',
    role: 'admin',
    params: idParams,
    async handler({ params: { policyId } }, { auth }) {
      const archived = await changePolicy(auth.workspaceId, policyId, { status: 'archived' });
      if (!archived) throw policyNotFound(policyId);
      return present(archived);
    },
  }),
);

/**
 * The workspace a request names, or the key's own. Only an owner may name another workspace, and
 * only one of its organisation; anything else is a 403, not a 404, so nothing is learnt about it.
 */
export async function scopedWorkspace(auth: AuthContext, workspaceId: string | undefined): Promise<string> {
  if (workspaceId === undefined || workspaceId === auth.workspaceId) return auth.workspaceId;
  if (auth.role === 'owner' && (await findWorkspace(auth.organisationId, workspaceId.slice(0, 100)))) return workspaceId;
  throw forbidden('workspace_id must be the workspace of the gateway key (an owner key may name any workspace of its organisation).');
}

export function checkKeys(conditions: readonly { key: string }[], groups: readonly { key: string }[], code = invalidCode): void {
  for (const [list, items] of [
    ['conditions', conditions],
    ['group_by', groups],
  ] as const) {
    items.forEach((item, index) => {
      if (!isPolicyKey(item.key)) throw badRequest(`Unknown key "${item.key.slice(0, 100)}"; a key is one of ${keyRule}.`, `${list}[${index}].key`, code);
    });
  }
}

function present(policy: RateLimitPolicy) {
  return {
    id: policy.id,
    type: policy.type,
    unit: policy.unit,
    value: policy.value,
    status: policy.status,
    workspace_id: policy.workspace_id,
    organisation_id: policy.organisation_id,
    created_at: new Date(policy.created_at).toISOString(),
    last_updated_at: new Date(policy.last_updated_at).toISOString(),
    name: policy.name ?? null,
    conditions: policy.conditions,
    group_by: policy.group_by,
  };
}
