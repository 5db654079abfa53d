/**
 * JSON paths as errors write them in `param`: `config.targets[1].retry.attempts`,
 * `checks[0].parameters.headers["x-api-key"]`. A key that is not an identifier is quoted in
 * brackets, so a path names one value even when keys hold dots, dashes or spaces.
 */

export type PathKey = string | number;

const identifier = /^[A-Za-z_$][\w$]*$/;

/** One key as it follows a path: `[2]`, `.name`, `["odd key"]`. */
export function pathStep(key: PropertyKey): string {
  if (typeof key === 'number') return `[${key}]`;
  const text = String(key);
  return identifier.test(text) ? `.${text}` : `[${JSON.stringify(text)}]`;
}

/** `root` followed by `keys`; with an empty root, a leading name is written bare (`rules.defaults`, not `.rules.defaults`). */
export function jsonPath(root: string, keys: readonly PropertyKey[]): string {
  let out = root;
  for (const key of keys) {
    const step = pathStep(key);
    out += out === '' && step.startsWith('.') ? step.slice(1) : step;
  }
  return out;
}
