import type { HookResult, HookResults } from './run-hooks';

/** Each hook result's JSON, once: an answer and its log line both show it. Results are not changed once made. */
const jsonOf = new WeakMap<HookResult, string>();

function resultJson(result: HookResult): string {
  let text = jsonOf.get(result);
  if (text === undefined) jsonOf.set(result, (text = JSON.stringify(result)));
  return text;
}

/** `hook_results` as JSON text, from each result's own serialisation. */
export function hookResultsJson(results: HookResults): string {
  return `{"before_request_hooks":[${results.before_request_hooks.map(resultJson).join(',')}],"after_request_hooks":[${results.after_request_hooks.map(resultJson).join(',')}]}`;
}
