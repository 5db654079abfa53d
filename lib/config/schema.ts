/**
 * Validation of the config object (`x-gateway-config`, saved configs, every `targets[]` item): one
 * zod schema (`zod/mini`, named imports only, to keep function bundles small) for the shape of the
 * spec, plus the cross-field rules in `schema-rules.ts`. All violations are reported at once, each
 * as `{ param, message }` with `param` the JSON path under `config` (e.g. `config.targets[1].retry.attempts`).
 *
 * Rules and the decisions taken where the spec is vague:
 * - No properties beyond the spec's, at every level; an unknown property is reported at its own path,
 *   with a "did you mean" when a known property is close. Guardrail objects also take extra
 *   properties whose values are objects (the checks and their parameters).
 * - The "at least one of these combinations" rule applies to the top-level config only. Because a
 *   request's `Authorization` header supplies `api_key` (DESIGN §5 "Config rules": the spec's rule 1
 *   is checked on the resolved target after header credentials are merged), `provider` alone
 *   satisfies `provider` + `api_key`; every other combination is as the spec lists it. The spec's
 *   rule 1 itself is not checked here: the routing layer checks it on the resolved target.
 * - `strategy.mode` is one of single, loadbalance, fallback, conditional. loadbalance, fallback and
 *   conditional need a non-empty `targets`; `targets` without a `strategy` is an error (nothing would
 *   route to them). conditional needs `conditions` (may be empty) and `default`; every `then` and the
 *   `default` name a target of the same strategy by its `name`, and those names must be unique.
 *   `conditions`, `default` and `on_status_codes` are accepted (and ignored) in other modes.
 * - `weight` is a number ≥ 0; a missing weight counts as 1; in loadbalance mode all-zero weights are
 *   an error.
 * - Status code lists (`on_status_codes`, `strategy.on_status_codes`, `retry.on_status_codes`,
 *   `cb_config.failure_status_codes`) hold integers from 100 to 599.
 * - `retry.attempts` is an integer from 0 to 5. `cb_config.failure_threshold` is a number ≥ 1 and
 *   `cooldown_interval` a number from 30000 (ms, as the spec types it) to 86400000 (a day).
 * - `cache.mode` is simple or semantic; `max_age` is a positive integer number of seconds ≤ 7,776,000
 *   (90 days). `request_timeout` is an integer from 1 to 900000 (ms): the inference functions' own
 *   timeout, past which the timeout could never fire.
 * - `custom_host` parses as an http:// or https:// URL (the address checks happen when connecting);
 *   `forward_headers` items are valid HTTP header names (RFC 9110 tokens).
 * - `provider`, `virtual_key`, `prompt_id`, `name`, hook and check ids, and guardrail id strings must
 *   not be empty; other strings (e.g. `api_key`) may be.
 * - Hooks: `id` is required; `type` is guardrail (the default) or mutator; `checks` items need `id`
 *   and `parameters`; `on_fail`/`on_success` hold `feedback` ({value, weight, metadata}) and `deny`.
 *   `deny` is also accepted at the hook's top level, where users write it (the one field beyond the
 *   spec's table; both places mean the same), and `async` on hooks of both sides.
 * - Guardrails: a non-empty string (a saved guardrail's id) or an object with `id`, `deny`, `async`,
 *   `on_fail`, `on_success` and, as extra properties, the checks it runs (`"<check id>": {parameters}`).
 * - Check ids must name a built-in check, and their parameters must suit it (`schema-rules.ts`).
 * - A structure nested too deeply for the stack to walk is reported as one issue, never a crash.
 */
import {
  array,
  boolean,
  catchall,
  enum as oneOf,
  gte,
  int,
  lte,
  number,
  optional,
  record,
  refine,
  strictObject,
  string,
  union,
  unknown,
  minLength,
} from 'zod/mini';
import type { infer as Infer, ZodMiniArray, ZodMiniOptional, ZodMiniType } from 'zod/mini';
import { GatewayError } from '../core/errors';
import { JsonTooDeepError, parseClientJson } from '../wire/client-json';
import { isPlainObject } from '../core/plain-object';
import { maxRequestTimeoutMs } from '../core/time';
import { asWritten, canonicalConfigFields } from './portkey-fields';
import { formatPath, ruleIssues, show, strategyModes, suggest, unknownKeyMessage, valueAt, type CheckRules, type Path } from './schema-rules';
import type { ConfigIssue, GatewayConfig } from './types';

export type ConfigParseResult = { ok: true; config: GatewayConfig } | { ok: false; issues: ConfigIssue[] };

// ---- schema helpers: every schema carries a description of what is allowed ("an integer from 0 to 5"),
// which the issue formatter turns into "must be …; got …" or "is required; must be …".

type RawIssue = { code: string; keys?: string[] };
const allowed = (description: string) => ({ error: () => description });

const strict = <Shape extends Record<string, ZodMiniType>>(shape: Shape, description: string, isConfig = false) => {
  const known = Object.keys(shape);
  return strictObject(shape, {
    error: (issue: RawIssue) =>
      issue.code === 'unrecognized_keys' ? (issue.keys ?? []).map((key) => unknownKeyMessage(key, known, isConfig)).join('\n') : description,
  });
};

const text = () => optional(string(allowed('a string')));
const name = (description = 'a non-empty string') => string(allowed(description)).check(minLength(1, allowed(description)));
const flag = () => optional(boolean(allowed('true or false')));
const anyObject = (description = 'an object') => record(string(), unknown(), allowed(description));
const numberAtLeast = (min: number, description: string) => number(allowed(description)).check(gte(min, allowed(description)));
const intRange = (min: number, max: number, description: string) =>
  int(allowed(description)).check(gte(min, allowed(description)), lte(max, allowed(description)));

const statusCodes = () =>
  optional(array(intRange(100, 599, 'an HTTP status code: an integer from 100 to 599'), allowed('an array of HTTP status codes (integers from 100 to 599)')));

const httpUrl = (value: string) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
};
const customHostText = 'an http:// or https:// URL (the base URL of the provider)';
const headerNameText = "a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~)";
const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Marks the issue of a guardrail's extra property whose value is not an object (see `fromZod`). */
const guardrailExtraText = 'an object (the parameters of the check this property names)';
const guardrailKnown = ['id', 'deny', 'async', 'on_fail', 'on_success'];

/** A breaker opens for at most a day: longer is a target switched off, which belongs in the config itself. */
const maxCooldownMs = 86_400_000;
const cooldownText = `a number of milliseconds from 30000 to ${maxCooldownMs} (a day)`;

/**
 * The schema, built on first use rather than when the module loads: building it is most of what
 * loading this module costs, which a function's cold start would pay even for requests that carry
 * no inline config.
 */
function buildConfigObject() {
  const strategySchema = strict(
    {
      mode: oneOf(strategyModes, allowed(`one of ${strategyModes.join(', ')}`)),
      conditions: optional(
        array(
          strict(
            { query: anyObject('an object (a query over metadata.*, params.* and url.pathname)'), then: string(allowed('a string naming a target')) },
            'an object with `query` and `then`',
          ),
          allowed('an array of {"query": {…}, "then": "<target name>"} objects'),
        ),
      ),
      default: optional(string(allowed('a string naming a target'))),
      on_status_codes: statusCodes(),
    },
    'an object with `mode` (single, loadbalance, fallback or conditional)',
  );

  const cacheSchema = strict(
    {
      mode: oneOf(['simple', 'semantic'], allowed('one of simple, semantic')),
      max_age: optional(intRange(1, 7_776_000, 'a positive integer number of seconds, at most 7776000 (90 days)')),
    },
    'an object with `mode` (simple or semantic) and optional `max_age` (seconds)',
  );

  const retrySchema = strict(
    { attempts: intRange(0, 5, 'an integer from 0 to 5'), on_status_codes: statusCodes(), use_retry_after_headers: flag() },
    'an object with `attempts` (0 to 5) and optional `on_status_codes`, `use_retry_after_headers`',
  );

  const circuitBreakerSchema = strict(
    {
      failure_threshold: numberAtLeast(1, 'a number of at least 1'),
      cooldown_interval: number(allowed(cooldownText)).check(gte(30_000, allowed(cooldownText)), lte(maxCooldownMs, allowed(cooldownText))),
      failure_status_codes: statusCodes(),
    },
    'an object with `failure_threshold` and `cooldown_interval`',
  );

  const deploymentSchema = strict(
    { deployment_id: string(allowed('a string')), alias: string(allowed('a string')), api_version: string(allowed('a string')), is_default: flag() },
    'an object with `deployment_id`, `alias` and `api_version`',
  );

  const feedbackSchema = strict(
    { value: optional(number(allowed('a number'))), weight: optional(number(allowed('a number'))), metadata: optional(anyObject()) },
    'an object with optional `value`, `weight` (numbers) and `metadata` (object)',
  );

  const outcome = optional(strict({ feedback: optional(feedbackSchema), deny: flag() }, 'an object with optional `feedback` and `deny`'));

  const checkSchema = strict({ id: name(), parameters: anyObject() }, 'an object with `id` and `parameters`');

  const hookText = 'a hook object with an `id`';
  const hooks = optional(
    array(
      strict(
        {
          id: name(),
          type: optional(oneOf(['guardrail', 'mutator'], allowed('"guardrail" or "mutator"'))),
          checks: optional(array(checkSchema, allowed('an array of {"id", "parameters"} objects'))),
          deny: flag(),
          async: flag(),
          on_fail: outcome,
          on_success: outcome,
        },
        hookText,
      ),
      allowed('an array of hook objects'),
    ),
  );

  const guardrails = optional(
    array(
      union(
        [
          name('a non-empty string (a guardrail id)'),
          catchall(
            strictObject({ id: text(), deny: flag(), async: flag(), on_fail: outcome, on_success: outcome }),
            record(string(), unknown(), allowed(guardrailExtraText)),
          ),
        ],
        allowed('a guardrail id (a non-empty string) or a guardrail object'),
      ),
      allowed('an array of guardrail ids (strings) or guardrail objects'),
    ),
  );

  // The config object, recursive through `targets`.
  const configObject = strict(
    {
      strategy: optional(strategySchema),
      get targets(): ZodMiniOptional<ZodMiniArray<ZodMiniType<GatewayConfig>>> {
        return optional(array(configObject, allowed('an array of config objects')));
      },
      name: optional(name()),
      strict_api_compliance: flag(),
      provider: optional(name('a non-empty string (a provider name or an @provider-slug)')),
      api_key: text(),
      virtual_key: optional(name()),
      prompt_id: optional(name()),
      request_timeout: optional(
        intRange(1, maxRequestTimeoutMs, `an integer number of milliseconds from 1 to ${maxRequestTimeoutMs} (the inference functions' own timeout)`),
      ),
      cache: optional(cacheSchema),
      retry: optional(retrySchema),
      cb_config: optional(circuitBreakerSchema),
      weight: optional(numberAtLeast(0, 'a number of 0 or more (a missing weight counts as 1)')),
      on_status_codes: statusCodes(),
      custom_host: optional(string(allowed(customHostText)).check(refine(httpUrl, allowed(customHostText)))),
      forward_headers: optional(
        array(string(allowed(headerNameText)).check(refine((value) => headerName.test(value), allowed(headerNameText))), allowed('an array of header names')),
      ),
      override_params: optional(anyObject('an object of request parameters (e.g. {"model": "…"})')),
      resource_name: text(),
      deployment_id: text(),
      api_version: text(),
      deployments: optional(array(deploymentSchema, allowed('an array of deployment objects'))),
      cloudA_access_key_id: text(),
      cloudA_secret_access_key: text(),
      cloudA_region: text(),
      cloudA_session_token: text(),
      compat_organization: text(),
      compat_project: text(),
      cloudB_project_id: text(),
      cloudB_region: text(),
      cloudB_service_account_json: optional(anyObject('an object (the service account JSON)')),
      cloudC_region: text(),
      cloudC_deployment_name: text(),
      cloudC_endpoint_name: text(),
      cloudC_api_version: text(),
      cloudC_deployment_type: optional(oneOf(['serverless', 'managed'], allowed('one of serverless, managed'))),
      cloudC_resource_name: text(),
      cloudC_deployment_id: text(),
      cloudC_model_name: text(),
      cloudC_entra_scope: text(),
      before_request_hooks: hooks,
      after_request_hooks: hooks,
      input_guardrails: guardrails,
      output_guardrails: guardrails,
    },
    'a JSON object (a config)',
    true,
  );
  return configObject;
}

let builtSchema: ZodMiniType<GatewayConfig> | undefined;
/** Typed as `GatewayConfig`, so the compiler checks the schema's output against the types (and `KeysMatch` the reverse). */
const configSchema = (): ZodMiniType<GatewayConfig> => (builtSchema ??= buildConfigObject());
type Assert<T extends true> = T;
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check that the schema and the type list the same fields
type KeysMatch = Assert<SameKeys<keyof GatewayConfig, keyof Infer<ReturnType<typeof buildConfigObject>>>>;

// ---- zod issues → ConfigIssue

interface ZodIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
  errors?: ZodIssue[][];
}

function fromZod(issue: ZodIssue, input: unknown, base: Path, out: ConfigIssue[]): void {
  const path = [...base, ...issue.path];
  if (issue.code === 'unrecognized_keys') {
    const messages = issue.message.split('\n');
    (issue.keys ?? []).forEach((key, index) =>
      out.push({ param: formatPath([...path, key]), message: messages[index] ?? `unknown property ${JSON.stringify(key)}` }),
    );
    return;
  }
  const { present, value } = valueAt(input, path);
  if (issue.code === 'invalid_union' && issue.errors?.length === 2) {
    // A guardrail item: report the problems of the branch its type selects.
    const branch = typeof value === 'string' ? issue.errors[0] : isPlainObject(value) ? issue.errors[1] : undefined;
    if (branch !== undefined && branch.length > 0) {
      for (const inner of branch) fromZod(inner, input, path, out);
      return;
    }
  }
  let message = present ? `must be ${issue.message}; got ${show(value)}` : `is required; must be ${issue.message}`;
  const last = path[path.length - 1];
  if (issue.message === guardrailExtraText && typeof last === 'string') {
    const match = suggest(last, guardrailKnown);
    if (match !== undefined) message += `; did you mean ${JSON.stringify(match)}?`;
  }
  out.push({ param: formatPath(path), message });
}

/**
 * Validates a config object, its checks by the built-in checks' rules (`checkIssues` of
 * guardrails/validate-checks); on failure returns every violation. Never throws.
 */
export function parseConfig(written: unknown, checkRules: CheckRules): ConfigParseResult {
  try {
    const { config: input, written: renamed } = canonicalConfigFields(written);
    const result = configSchema().safeParse(input);
    const found: ConfigIssue[] = [];
    if (!result.success) for (const issue of result.error.issues as unknown as ZodIssue[]) fromZod(issue, input, [], found);
    found.push(...ruleIssues(input, checkRules));
    if (found.length === 0 && result.success) return { ok: true, config: result.data };
    const issues = found.map((issue) => asWritten(issue, renamed));
    const seen = new Set<string>();
    const unique = issues.filter((issue) => {
      const key = `${issue.param}\n${issue.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    return { ok: false, issues: unique.length > 0 ? unique : [{ param: 'config', message: 'is not a valid config' }] };
  } catch (error) {
    if (error instanceof RangeError)
      return { ok: false, issues: [{ param: 'config', message: 'is nested too deeply to validate; flatten the `targets` tree' }] };
    return { ok: false, issues: [{ param: 'config', message: 'could not be read as a config object' }] };
  }
}

/**
 * parseConfig where the checks' rules load only for a config that runs a check: the checks and
 * what they need (a JSON Schema validator among them) are about a seventh of what the chat
 * function would otherwise load at its cold start, and a config without hooks or guardrails never
 * needs them.
 */
export async function parseConfigLoadingChecks(written: unknown): Promise<ConfigParseResult> {
  let runsChecks = false;
  const withoutChecks = parseConfig(written, (checks) => {
    if (checks.length > 0) runsChecks = true;
    return [];
  });
  if (!runsChecks) return withoutChecks;
  const { checkIssues } = await import('../guardrails/validate-checks');
  return parseConfig(written, checkIssues);
}

/** x-gateway-config header value starting with `{` → its config, validated; malformed JSON is an issue with param 'x-gateway-config'. */
export async function parseConfigHeader(value: string): Promise<ConfigParseResult> {
  const trimmed = value.trim();
  if (!trimmed.startsWith('{')) {
    return {
      ok: false,
      issues: [{ param: 'x-gateway-config', message: 'must be a JSON config object starting with "{" (a saved config id is resolved separately)' }],
    };
  }
  let parsed: unknown;
  try {
    parsed = parseClientJson(trimmed);
  } catch (error) {
    if (error instanceof JsonTooDeepError)
      return { ok: false, issues: [{ param: 'x-gateway-config', message: `is refused: ${error.message}; flatten the targets tree or save the config` }] };
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, issues: [{ param: 'x-gateway-config', message: `must be valid JSON; ${reason}` }] };
  }
  return parseConfigLoadingChecks(parsed);
}

/** 400 GatewayError: code 'AB01', type 'invalid_request_error', param = first issue's param, message = "Invalid config: " + all issues joined with "; ". */
export function configError(issues: ConfigIssue[]): GatewayError {
  const list = issues.length > 0 ? issues : [{ param: 'config', message: 'is not a valid config' }];
  const message = `Invalid config: ${list.map((issue) => `${issue.param}: ${issue.message}`).join('; ')}`;
  return new GatewayError(400, message, {
    type: 'invalid_request_error',
    code: 'AB01',
    param: list[0].param,
    issues: list.map(({ param, message: text }) => ({ param, message: text })),
  });
}
