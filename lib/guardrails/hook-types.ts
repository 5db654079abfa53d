/**
 * Hooks and guardrails as a config writes them (`before_request_hooks`, `after_request_hooks`,
 * `input_guardrails`, `output_guardrails`, saved guardrails' checks). The config object embeds
 * them; they live here so the guardrails that read them do not import the config.
 */

export interface Feedback {
  value?: number;
  weight?: number;
  metadata?: Record<string, unknown>;
}

export interface HookCheck {
  id: string;
  parameters: Record<string, unknown>;
}

/** What a hook does when its checks fail or pass: feedback for the log, and whether to deny. */
export interface HookOutcome {
  feedback?: Feedback;
  deny?: boolean;
}

/** A before- or after-request hook. `deny` may stand at the top level or in `on_fail`/`on_success`; both mean the same. */
export interface Hook {
  id: string;
  type?: 'guardrail' | 'mutator';
  deny?: boolean;
  async?: boolean;
  checks?: HookCheck[];
  on_fail?: HookOutcome;
  on_success?: HookOutcome;
}

/** A saved guardrail's id, or an inline guardrail whose extra properties are its checks (`"<check id>": {parameters}`). */
export type Guardrail = string | ({ id?: string; deny?: boolean; async?: boolean; on_fail?: HookOutcome; on_success?: HookOutcome } & Record<string, unknown>);

/** The hook fields of a config or target, as a target inherits them from its parents. */
export interface HookSettings {
  before_request_hooks?: Hook[];
  after_request_hooks?: Hook[];
  input_guardrails?: Guardrail[];
  output_guardrails?: Guardrail[];
}
