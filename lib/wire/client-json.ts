/**
 * How deeply a client's JSON (a body or a JSON header) may nest. Checked once, where it is parsed,
 * so nothing that walks the value later (adapters, config validation, logs) can run out of stack.
 * Real requests stay far below it: a tool's JSON Schema rarely nests past 20 levels.
 */
export const maxJsonDepth = 64;

/** The JSON nests more than {@link maxJsonDepth} arrays and objects deep. */
export class JsonTooDeepError extends Error {
  constructor() {
    super(`it nests arrays and objects more than ${maxJsonDepth} levels deep (the gateway's limit)`);
    this.name = 'JsonTooDeepError';
  }
}

/**
 * `JSON.parse` for text a client sent: throws JsonTooDeepError before parsing when brackets outside
 * strings nest deeper than {@link maxJsonDepth}, and JSON.parse's SyntaxError when it is not JSON.
 */
export function parseClientJson(text: string): unknown {
  if (text.length > maxJsonDepth && openingBrackets(text, maxJsonDepth) > maxJsonDepth && nestingDepth(text) > maxJsonDepth) throw new JsonTooDeepError();
  return JSON.parse(text);
}

/**
 * How many `{` and `[` the text holds (strings included), counting no further than past `limit`.
 * No more brackets than the limit cannot nest deeper than it, so a typical body (a chat of tens of
 * messages) skips the exact scan; `indexOf` finds them far faster than a loop over every character.
 */
function openingBrackets(text: string, limit: number): number {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at >= 0; at = text.indexOf(bracket, at + 1)) if (++count > limit) return count;
  }
  return count;
}

/** The deepest bracket nesting outside string literals (a scan, no recursion; stops past the limit). */
function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c /* \ */) index++;
      else if (code === 0x22 /* " */) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x7b /* { */ || code === 0x5b /* [ */) {
      if (++depth > deepest && (deepest = depth) > maxJsonDepth) return deepest;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      depth--;
    }
  }
  return deepest;
}
