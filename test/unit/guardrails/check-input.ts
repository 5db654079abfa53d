import type { CheckInput } from '../../../lib/guardrails';
import { findCheck, runCheck } from '../../../lib/guardrails';

/** A request-side chat input around `text`; fields override. */
export function checkInput(text: string, overrides: Partial<CheckInput> = {}): CheckInput {
  return {
    side: 'request',
    text,
    operation: 'chat',
    request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] },
    metadata: {},
    headers: {},
    ...overrides,
  };
}

/** Runs the built-in check `id` the way the hook runner does. */
export function run(id: string, parameters: Record<string, unknown>, input: CheckInput | string) {
  const check = findCheck(id);
  if (!check) throw new Error(`no check ${id}`);
  return runCheck(check, parameters, typeof input === 'string' ? checkInput(input) : input);
}
