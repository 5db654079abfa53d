import type { Feedback, Guardrail, Hook, HookCheck, HookSettings } from './hook-types';

/** Which part of the exchange a hook sees: the request before any provider call, or the answer. */
export type HookSide = 'input' | 'output';

/**
 * One hook as it runs, whichever way it was written: a hook object, an inline guardrail (its
 * extra properties are its checks) or a saved guardrail.
 */
export interface HookSpec {
  id: string;
  type: 'guardrail' | 'mutator';
  checks: HookCheck[];
  /** Failing checks withhold the request or answer (446) instead of flagging it (246). */
  deny: boolean;
  /** Runs after the answer is sent; its results go to the log only. */
  async: boolean;
  onFail?: Feedback;
  onSuccess?: Feedback;
}

/** A saved guardrail as the runner needs it (the store keeps more). */
export interface SavedGuardrailSpec {
  id: string;
  checks: HookCheck[];
  actions: { deny?: boolean; async?: boolean; on_fail?: { feedback?: Feedback; deny?: boolean }; on_success?: { feedback?: Feedback } };
}

/** Properties of an inline guardrail that are not checks. */
const guardrailFields = new Set(['id', 'deny', 'async', 'on_fail', 'on_success']);

/**
 * The hooks a request or target sets for one side, in the order they run: input guardrails before
 * before-request hooks, after-request hooks before output guardrails. A saved guardrail's id is
 * looked up with `findSaved`, which answers undefined for an id the workspace does not have.
 */
export async function hooksOfSide(
  settings: HookSettings,
  side: HookSide,
  findSaved: (id: string) => Promise<SavedGuardrailSpec | undefined>,
): Promise<HookSpec[]> {
  const [hooks, guardrails, guardrailsField] =
    side === 'input'
      ? [settings.before_request_hooks, settings.input_guardrails, 'input_guardrails']
      : [settings.after_request_hooks, settings.output_guardrails, 'output_guardrails'];
  const fromGuardrails = await Promise.all((guardrails ?? []).map((guardrail, index) => guardrailSpec(guardrail, `${guardrailsField}[${index}]`, findSaved)));
  const fromHooks = (hooks ?? []).map(hookSpec);
  return side === 'input' ? [...fromGuardrails, ...fromHooks] : [...fromHooks, ...fromGuardrails];
}

/** Whether a target sets any hook at all, so requests without them skip every hook step at once. */
export function hasHooks(settings: HookSettings): boolean {
  return Boolean(
    settings.before_request_hooks?.length || settings.after_request_hooks?.length || settings.input_guardrails?.length || settings.output_guardrails?.length,
  );
}

export function hookSpec(hook: Hook): HookSpec {
  return {
    id: hook.id,
    type: hook.type ?? 'guardrail',
    checks: hook.checks ?? [],
    deny: Boolean(hook.deny || hook.on_fail?.deny),
    async: Boolean(hook.async),
    onFail: hook.on_fail?.feedback,
    onSuccess: hook.on_success?.feedback,
  };
}

async function guardrailSpec(guardrail: Guardrail, where: string, findSaved: (id: string) => Promise<SavedGuardrailSpec | undefined>): Promise<HookSpec> {
  if (typeof guardrail === 'string') {
    const saved = await findSaved(guardrail);
    if (!saved) throw new UnknownGuardrailError(guardrail, where);
    const { actions } = saved;
    return {
      id: saved.id,
      type: 'guardrail',
      checks: saved.checks,
      deny: Boolean(actions.deny || actions.on_fail?.deny),
      async: Boolean(actions.async),
      onFail: actions.on_fail?.feedback,
      onSuccess: actions.on_success?.feedback,
    };
  }
  const checks: HookCheck[] = [];
  for (const [id, parameters] of Object.entries(guardrail)) {
    if (!guardrailFields.has(id)) checks.push({ id, parameters: parameters as Record<string, unknown> });
  }
  return {
    id: typeof guardrail.id === 'string' && guardrail.id ? guardrail.id : where,
    type: 'guardrail',
    checks,
    deny: Boolean(guardrail.deny || guardrail.on_fail?.deny),
    async: Boolean(guardrail.async),
    onFail: guardrail.on_fail?.feedback,
    onSuccess: guardrail.on_success?.feedback,
  };
}

/** A config names a saved guardrail its workspace does not have. */
export class UnknownGuardrailError extends Error {
  constructor(
    readonly guardrailId: string,
    readonly where: string,
  ) {
    super(`No saved guardrail ${guardrailId.slice(0, 100)} in this workspace (${where}). Create it with POST /v1/guardrails, or check the id.`);
  }
}
