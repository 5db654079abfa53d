import { enum as oneOf, maxLength, minLength, number, optional, refine, string } from 'zod/mini';
import { counterUnits, budgetUnits } from '../budgets/enforce';
import { periodAt } from '../budgets/periods';
import { changeBudget, createBudget, findBudget, listBudgets, type UsageLimitPolicy } from '../budgets/policies';
import { badRequest, notFound } from '../core/errors';
import { answerFields, controlRoutes, defineRoute, knownFields } from '../http/define-route';
import type { PolicyCondition } from '../store/workspace-policies';
import { listUsage } from '../store/usage-counters';
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
const invalidCode = 'invalid_usage_limit_policy';
const budgetNotFound = (id: string) => notFound(`No usage-limit policy ${id.slice(0, 100)} in this workspace.`, 'policy_not_found');

const invalidName = 'name must be a string of 1 to 255 characters.';
const invalidLimit = 'credit_limit must be a number greater than 0 (USD for cost, whole tokens for tokens).';
const invalidThreshold = 'alert_threshold must be a number greater than 0 and at most credit_limit.';
const invalidDays = 'periodic_reset_days must be a whole number from 1 to 365.';
/** Buckets a budget's answer lists; a budget grouped by user may have many more. */
const maxListedBuckets = 100;

const name = string(invalidName).check(minLength(1, invalidName), maxLength(255, invalidName));
const amount = (message: string) => number(message).check(refine((n) => Number.isFinite(n) && n > 0 && n <= 1e12, message));

const createBody = knownFields(
  {
    name,
    conditions,
    group_by: groupBy,
    type: oneOf(['cost', 'tokens'], 'type must be cost or tokens.'),
    credit_limit: amount(invalidLimit),
    alert_threshold: optional(amount(invalidThreshold)),
    periodic_reset: optional(oneOf(['weekly', 'monthly'], 'periodic_reset must be weekly or monthly.')),
    periodic_reset_days: optional(number(invalidDays).check(refine((n) => Number.isInteger(n) && n >= 1 && n <= 365, invalidDays))),
    workspace_id: optional(string('workspace_id must be a string.')),
    organisation_id: optional(string('organisation_id must be a string.')),
  },
  (field) =>
    `Unknown field "${field}"; a usage-limit policy takes name, conditions, group_by, type, credit_limit, alert_threshold, periodic_reset, periodic_reset_days, workspace_id and organisation_id.`,
);

const updateBody = knownFields(
  {
    name: optional(name),
    credit_limit: optional(amount(invalidLimit)),
    alert_threshold: optional(amount(invalidThreshold)),
    conditions: optional(conditions),
    group_by: optional(groupBy),
    status: optional(policyStatus),
    ...answerFields([
      'id',
      'object',
      'type',
      'periodic_reset',
      'periodic_reset_days',
      'workspace_id',
      'organisation_id',
      'created_at',
      'last_updated_at',
      'current_usage',
      'usage',
      'period_start',
      'next_usage_reset_at',
    ]),
  },
  (field) => `Unknown field "${field}"; an update takes name, credit_limit, alert_threshold, conditions, group_by and status.`,
);

const listQuery = policyListQuery({ type: optional(oneOf(['cost', 'tokens'], 'type must be cost or tokens.')) });

/**
 * `/v1/policies/usage-limits`: a workspace's budgets (Portkey's shapes).
 *
 * - `POST` `{name, conditions, group_by, type: cost|tokens, credit_limit, alert_threshold?,
 *   periodic_reset?: weekly|monthly, periodic_reset_days?: 1..365, workspace_id?, organisation_id?}` (admin) → the budget.
 * - `GET ?workspace_id&status&type&page_size&current_page` → `{object: "list", data, total}`.
 * - `GET /{policyId}`; `PUT /{policyId}` `{name?, credit_limit?, alert_threshold?, conditions?, group_by?, status?}` (admin);
 *   `DELETE /{policyId}` archives it (admin).
 *
 * Every answer carries the current period's usage and `next_usage_reset_at`.
 */
export const usageLimitsRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/policies/usage-limits',
    role: 'admin',
    body: createBody,
    invalidCode,
    async handler({ body }, { auth }) {
      const workspaceId = await newPolicyWorkspace(auth, body);
      checkKeys(body.conditions, body.group_by, invalidCode);
      if (body.periodic_reset !== undefined && body.periodic_reset_days !== undefined)
        throw badRequest('periodic_reset and periodic_reset_days are exclusive: give one of them.', 'periodic_reset_days', invalidCode);
      checkTokenLimit(body);
      checkThreshold(body);
      const budget = await createBudget(
        { workspaceId, organisationId: auth.organisationId },
        {
          name: body.name,
          type: body.type,
          credit_limit: body.credit_limit,
          alert_threshold: body.alert_threshold,
          periodic_reset: body.periodic_reset,
          periodic_reset_days: body.periodic_reset_days,
          conditions: body.conditions as PolicyCondition[],
          group_by: body.group_by,
        },
      );
      return { ...(await present(budget)), object: policyObject };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/policies/usage-limits',
    role: 'member',
    query: listQuery,
    invalidCode,
    async handler({ query }, { auth }) {
      const workspaceId = await scopedWorkspace(auth, query.workspace_id);
      const status = query.status ?? 'active';
      const matching = (await listBudgets(workspaceId)).filter((budget) => budget.status === status && (!query.type || budget.type === query.type));
      const { page, total } = policyPage(matching, query);
      return { object: 'list', data: await Promise.all(page.map((budget) => present(budget))), total };
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/policies/usage-limits/{policyId}',
    role: 'admin',
    params: policyIdParams,
    body: updateBody,
    invalidCode,
    async handler({ params: { policyId }, body }, { auth }) {
      checkUnmoved(auth, body, invalidCode);
      if (body.conditions || body.group_by) checkKeys(body.conditions ?? [], body.group_by ?? [], invalidCode);
      const changed = await changeBudget(
        auth.workspaceId,
        policyId,
        {
          name: body.name,
          credit_limit: body.credit_limit,
          alert_threshold: body.alert_threshold,
          conditions: body.conditions as PolicyCondition[] | undefined,
          group_by: body.group_by,
          status: body.status,
        },
        (budget) => {
          checkTokenLimit(budget);
          checkThreshold(budget);
        },
      );
      if (!changed) throw budgetNotFound(policyId);
      return present(changed);
    },
  }),
  ...policyByIdRoutes('/v1/policies/usage-limits/{policyId}', { find: findBudget, change: changeBudget }, budgetNotFound, present),
);

/** A tokens budget counts whole tokens, so its limit is one; a cost budget's is any amount of USD. */
function checkTokenLimit(budget: { type: string; credit_limit: number }): void {
  if (budget.type === 'tokens' && !Number.isSafeInteger(budget.credit_limit))
    throw badRequest(`credit_limit must be a whole number of tokens for a tokens budget; got ${budget.credit_limit}.`, 'credit_limit', invalidCode);
}

function checkThreshold(budget: { alert_threshold?: number; credit_limit: number }): void {
  if (budget.alert_threshold !== undefined && budget.alert_threshold > budget.credit_limit)
    throw badRequest(
      `alert_threshold (${budget.alert_threshold}) must be at most credit_limit (${budget.credit_limit}); lower it or raise credit_limit.`,
      'alert_threshold',
      invalidCode,
    );
}

/** A budget with its current period: `current_usage` is the bucket with the most usage, `usage` lists buckets (the fullest first). */
async function present(budget: UsageLimitPolicy, now = Date.now()) {
  const period = periodAt(budget, now);
  const buckets = (await listUsage(budget.id, period.start, maxListedBuckets))
    .map((bucket) => ({
      group: bucket.group,
      usage: budgetUnits(budget.type, bucket.usage),
      exhausted: bucket.usage >= counterUnits(budget.type, budget.credit_limit),
      alerted_at: bucket.alertedAt === undefined ? null : new Date(bucket.alertedAt).toISOString(),
    }))
    .sort((a, b) => b.usage - a.usage);
  return {
    id: budget.id,
    name: budget.name,
    type: budget.type,
    credit_limit: budget.credit_limit,
    alert_threshold: budget.alert_threshold ?? null,
    periodic_reset: budget.periodic_reset ?? null,
    periodic_reset_days: budget.periodic_reset_days ?? null,
    status: budget.status,
    workspace_id: budget.workspace_id,
    organisation_id: budget.organisation_id,
    conditions: budget.conditions,
    group_by: budget.group_by,
    created_at: new Date(budget.created_at).toISOString(),
    last_updated_at: new Date(budget.last_updated_at).toISOString(),
    current_usage: buckets[0]?.usage ?? 0,
    usage: buckets,
    period_start: new Date(period.start).toISOString(),
    next_usage_reset_at: period.end === undefined ? null : new Date(period.end).toISOString(),
  };
}
