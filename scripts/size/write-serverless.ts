/**
 * Writes each function's `memorySize:` into serverless.yml as text, touching nothing else: in the
 * `functions:` block, a function's own `memorySize:` line (with its comment) is replaced, or one is
 * added after its `handler:` line. The provider-level default, the resources and every other line
 * stay byte for byte as they were.
 */

export interface MemorySetting {
  memoryMb: number;
  /** Said after the value, as a YAML comment (one line). */
  comment: string;
}

const functionKey = /^ {2}([A-Za-z][A-Za-z0-9_-]*):\s*(#.*)?$/;
const ownMemory = /^ {4}memorySize:/;
const ownHandler = /^ {4}handler:/;

function memoryLine(setting: MemorySetting): string {
  const comment = setting.comment.replace(/[\r\n]+/g, ' ').trim();
  return `    memorySize: ${setting.memoryMb}${comment ? ` # ${comment}` : ''}`;
}

/**
 * Returns serverless.yml's text with the given functions' sizes set. Throws when there is no
 * `functions:` block or a named function is not in it.
 */
export function writeMemorySizes(text: string, settings: ReadonlyMap<string, MemorySetting>): string {
  const newline = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => /^functions:\s*(#.*)?$/.test(line));
  if (start === -1) throw new Error('serverless.yml has no top-level functions: block');
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    if (/^\S/.test(lines[i]) && !lines[i].startsWith('#')) {
      end = i;
      break;
    }
  }
  const found = new Set<string>();
  const out = lines.slice(0, start + 1);
  let current: string | undefined;
  let pending: MemorySetting | undefined;
  let handlerAt = -1;
  const finish = () => {
    // The function had no memorySize of its own: it goes after the handler (or the name).
    if (pending && current !== undefined) out.splice(handlerAt + 1, 0, memoryLine(pending));
    pending = undefined;
  };
  for (let i = start + 1; i < end; i++) {
    const line = lines[i];
    const key = functionKey.exec(line);
    if (key) {
      finish();
      current = key[1];
      pending = settings.get(current);
      if (pending) found.add(current);
      out.push(line);
      handlerAt = out.length - 1;
      continue;
    }
    if (pending && ownMemory.test(line)) {
      out.push(memoryLine(pending));
      pending = undefined;
      continue;
    }
    out.push(line);
    if (pending && ownHandler.test(line)) handlerAt = out.length - 1;
  }
  finish();
  const missing = [...settings.keys()].filter((name) => !found.has(name));
  if (missing.length > 0) throw new Error(`serverless.yml has no function ${missing.join(', ')}`);
  return [...out, ...lines.slice(end)].join(newline);
}
