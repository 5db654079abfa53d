import { array, boolean, maxLength, minLength, number, object, optional, record, string, unknown } from 'zod/mini';
import { maskConfigSecrets, maskedSecret, maskedSecretPaths, restoreMaskedSecrets } from '../config/saved-configs';
import { movedSecretError } from '../config/secret-destinations';
import type { HookCheck } from '../guardrails/hook-types';
import { badRequest, notFound } from '../core/errors';
import {
  createGuardrail,
  deleteGuardrail,
  getGuardrail,
  listGuardrails,
  replaceGuardrail,
  type GuardrailActions,
  type GuardrailFields,
  type SavedGuardrail,
} from '../guardrails/saved-guardrails';
import { checkIssues } from '../guardrails/validate-checks';
import { answerFields, controlRoutes, defineRoute, knownFields, messageAt } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';

const guardrailNotFound = (id: string) => notFound(`No saved guardrail ${id.slice(0, 100)} in this workspace.`, 'guardrail_not_found');

const maxChecks = 50;
const invalidName = 'name must be a string of 1 to 255 characters.';
const checksRule = `checks must be a list of 1 to ${maxChecks} {"id": "<check id>", "parameters": {…}} objects.`;
const noField = (takes: string) => (field: string, at: string) => `${at} has no field "${field.slice(0, 100)}"; ${takes}.`;

const feedback = optional(
  knownFields(
    {
      value: optional(number(messageAt('must be a number.'))),
      weight: optional(number(messageAt('must be a number.'))),
      metadata: optional(record(string(), unknown(), messageAt('must be an object of metadata keys to values.'))),
    },
    noField('feedback takes value, weight and metadata'),
  ),
);

const guardrailBody = knownFields(
  {
    name: string(invalidName).check(minLength(1, invalidName), maxLength(255, invalidName)),
    checks: array(
      knownFields(
        {
          id: string(messageAt('must be a check id, e.g. "default.regexMatch".')).check(
            minLength(1, messageAt('is empty; give a check id, e.g. "default.regexMatch".')),
          ),
          parameters: optional(record(string(), unknown(), messageAt('must be an object of parameter names to values.'))),
        },
        noField('a check takes id and parameters'),
      ),
      checksRule,
    ).check(minLength(1, checksRule), maxLength(maxChecks, checksRule)),
    actions: optional(
      knownFields(
        {
          deny: optional(boolean(messageAt('must be true or false.'))),
          async: optional(boolean(messageAt('must be true or false.'))),
          on_fail: optional(
            knownFields({ feedback, deny: optional(boolean(messageAt('must be true or false.'))) }, noField('on_fail takes feedback and deny')),
          ),
          on_success: optional(knownFields({ feedback }, noField('on_success takes feedback'))),
        },
        noField('actions take deny, async, on_fail and on_success'),
      ),
    ),
    ...answerFields(['object', 'id', 'created_at', 'updated_at']),
  },
  (field) => `Unknown field "${field}"; a guardrail takes name, checks and actions.`,
);

type GuardrailBody = { name: string; checks: Array<{ id: string; parameters?: Record<string, unknown> }>; actions?: Partial<GuardrailActions> };

/**
 * `/v1/guardrails`: a workspace's saved guardrails, referenced by id from a config's
 * `input_guardrails` / `output_guardrails`.
 *
 * - `POST /v1/guardrails` `{name, checks: [{id, parameters}], actions: {deny, async, on_fail, on_success}}` (admin).
 * - `GET /v1/guardrails?limit=&after=` lists them newest first (names only).
 * - `GET /v1/guardrails/{guardrailId}` answers one, with `headers` parameter values masked.
 * - `PUT /v1/guardrails/{guardrailId}` replaces it whole (admin); a masked value sent back keeps the stored one,
 *   unless the check's URL changes (400 `credentials_required`: moving a secret takes the secret).
 * - `DELETE /v1/guardrails/{guardrailId}` (admin).
 *
 * Every check is validated when saved: an unknown id or a parameter the check cannot run with is a
 * 400 naming it. Requests pick up a change within 5 s.
 */
export const guardrailsRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/guardrails',
    role: 'admin',
    body: guardrailBody,
    invalidCode: 'invalid_guardrail_body',
    async handler({ body }, { auth }) {
      const [masked] = maskedSecretPaths(body.checks, 'checks');
      if (masked)
        throw badRequest(`${masked} is the mask placeholder "${maskedSecret}" that answers show; send the real value.`, masked, 'invalid_guardrail_body');
      return present(await createGuardrail(auth.workspaceId, validated(body as GuardrailBody)));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/guardrails',
    role: 'member',
    query: pageQuery(),
    handler: async ({ query }, { auth }) => listEnvelope(await listGuardrails(auth.workspaceId, query), (summary) => ({ object: 'guardrail', ...summary })),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/guardrails/{guardrailId}',
    role: 'member',
    params: object({ guardrailId: string() }),
    async handler({ params: { guardrailId } }, { auth }) {
      const found = await getGuardrail(auth.workspaceId, guardrailId);
      if (!found) throw guardrailNotFound(guardrailId);
      return present(found);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/guardrails/{guardrailId}',
    role: 'admin',
    params: object({ guardrailId: string() }),
    body: guardrailBody,
    invalidCode: 'invalid_guardrail_body',
    async handler({ params: { guardrailId }, body }, { auth }) {
      const current = await getGuardrail(auth.workspaceId, guardrailId);
      if (!current) throw guardrailNotFound(guardrailId);
      const restored = restoreMaskedSecrets(body.checks, current.checks, 'checks');
      const [unresolved] = restored.unresolved;
      if (unresolved)
        throw badRequest(
          `${unresolved} is the mask placeholder and nothing is stored there to keep; send the real value.`,
          unresolved,
          'invalid_guardrail_body',
        );
      if (restored.moved.length > 0) throw movedSecretError(restored.moved, 'URL', maskedSecret);
      const replaced = await replaceGuardrail(
        auth.workspaceId,
        guardrailId,
        validated({ ...(body as GuardrailBody), checks: restored.config as GuardrailBody['checks'] }),
      );
      if (!replaced) throw guardrailNotFound(guardrailId);
      return present(replaced);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/guardrails/{guardrailId}',
    role: 'admin',
    params: object({ guardrailId: string() }),
    async handler({ params: { guardrailId } }, { auth }) {
      if (!(await deleteGuardrail(auth.workspaceId, guardrailId))) throw guardrailNotFound(guardrailId);
      return { id: guardrailId, object: 'guardrail', deleted: true };
    },
  }),
);

/** The guardrail to store, once every check is known to run; otherwise a 400 naming the first problem. */
function validated(body: GuardrailBody): GuardrailFields {
  const checks: HookCheck[] = body.checks.map((check) => ({ id: check.id, parameters: check.parameters ?? {} }));
  const [issue] = checkIssues(checks, (index) => ({ id: `checks[${index}].id`, parameters: `checks[${index}].parameters` }));
  if (issue) throw badRequest(issue.message, issue.param, 'invalid_guardrail_check');
  const actions = body.actions ?? {};
  return { name: body.name, checks, actions: { ...actions, deny: actions.deny ?? false, async: actions.async ?? false } };
}

function present(saved: SavedGuardrail) {
  return {
    object: 'guardrail',
    id: saved.id,
    name: saved.name,
    checks: maskConfigSecrets(saved.checks),
    actions: saved.actions,
    created_at: saved.created_at,
    updated_at: saved.updated_at,
  };
}
