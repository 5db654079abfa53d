import { enum as oneOf, maxLength, number, optional, refine, string } from 'zod/mini';
import { notFound } from '../core/errors';
import { answerFields, controlRoutes, defineRoute, knownFields } from '../http/define-route';
import { changePolicy, createPolicy, findPolicy, listPolicies, type PolicyCondition, type RateLimitPolicy } from '../ratelimit/policies';
import {
  checkKeys,
  checkUnmoved,
  conditions,
  groupBy,
  newPolicyWorkspace,
  policyByIdRoutes,
  policyIdParams,
  policyListQuery,
  policyPage,
  policyStatus,
  scopedWorkspace,
} from './policy-fields';

const policyObject = 'policy_usage_limits';
const invalidCode = 'invalid_rate_limit_policy';
const policyNotFound = (id: string) => notFound(`No rate-limit policy ${id.slice(0, 100)} in this workspace.`, 'policy_not_found');

const invalidName = 'name must be a string of at most 255 characters.';
const invalidValue = 'value must be a whole number of at least 1.';

const value = number(invalidValue).check(refine((n) => Number.isSafeInteger(n) && n >= 1, invalidValue));
const name = string(invalidName).check(maxLength(255, invalidName));

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
    status: optional(policyStatus),
    ...answerFields(['id', 'object', 'type', 'unit', 'workspace_id', 'organisation_id', 'created_at', 'last_updated_at']),
  },
  (field) => `Unknown field "${field}"; an update takes value, name, conditions, group_by and status.`,
);

const listQuery = policyListQuery({
  type: optional(oneOf(['requests', 'tokens'], 'type must be requests or tokens.')),
  unit: optional(oneOf(['rpm', 'rph', 'rpd'], 'unit must be rpm, rph or rpd.')),
});

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
      const workspaceId = await newPolicyWorkspace(auth, body);
      checkKeys(body.conditions, body.group_by, invalidCode);
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
      const matching = (await listPolicies(workspaceId)).filter(
        (policy) => policy.status === status && (!query.type || policy.type === query.type) && (!query.unit || policy.unit === query.unit),
      );
      const { page, total } = policyPage(matching, query);
      return { object: 'list', data: page.map(present), total };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/policies/rate-limits/{policyId}',
    role: 'admin',
    params: policyIdParams,
    body: updateBody,
    invalidCode,
    async handler({ params: { policyId }, body }, { auth }) {
      checkUnmoved(auth, body, invalidCode);
      if (body.conditions || body.group_by) checkKeys(body.conditions ?? [], body.group_by ?? [], invalidCode);
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
  ...policyByIdRoutes('/v1/policies/rate-limits/{policyId}', { find: findPolicy, change: changePolicy }, policyNotFound, present),
);

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
