/**
 * `${...}` variables in serverless.yml (the documented subset; anything else is an error naming the
 * variable):
 *   ${self:<path>}                 another value of this file (itself resolved)
 *   ${sls:stage}                   the stage given in the options
 *   ${opt:stage}, ${opt:region}    the options given (`${opt:<name>}` for any other name is unset)
 *   ${aws:region}                  options.region, else provider.region, else us-east-1
 *   ${aws:accountId}               000000000000 (the local account)
 *   ${env:NAME}                    process.env.NAME
 * with fallbacks `${opt:stage, 'dev'}` (quoted strings, numbers, true/false/null or another variable,
 * tried left to right when a source has no value) and variables nested in addresses
 * (`${self:custom.${sls:stage}.x}`). As in the framework, `${...}` whose content does not start with
 * `<lowercase type>:` or `<lowercase type>(` (for example `${AWS::Region}` or `${MyTable.Arn}` inside
 * `!Sub`) is not a variable and is left for CloudFormation; `\${` escapes a variable.
 */
import { isPlainObject } from '../../core/plain-object';

export interface VariableOptions {
  stage: string;
  region: string;
  /** The answer to ${aws:accountId}. */
  accountId: string;
  options: Record<string, string | undefined>;
  env: NodeJS.ProcessEnv;
}

type Source = { kind: 'literal'; value: unknown } | { kind: 'variable'; type: string; address: string; text: string } | { kind: 'nested'; expression: string };

/** Resolves the `${...}` variables of one parsed file (`raw`). */
export class VariableResolver {
  private readonly resolving = new Set<string>();
  private readonly cache = new Map<string, unknown>();

  constructor(
    private readonly raw: Record<string, unknown>,
    private readonly vars: VariableOptions,
    private readonly fileName: string,
  ) {}

  /** Resolves every variable in `value` (deeply). `where` names the property path for errors. */
  resolveValue(value: unknown, where: string): unknown {
    if (typeof value === 'string') return this.resolveString(value, where);
    if (Array.isArray(value)) return value.map((item, index) => this.resolveValue(item, `${where}[${index}]`));
    if (isPlainObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[key] = this.resolveValue(item, join(where, key));
      return out;
    }
    return value;
  }

  /** The resolved value at a dotted path of the file (`provider.stage`). */
  resolvePath(dottedPath: string): unknown {
    if (this.cache.has(dottedPath)) return this.cache.get(dottedPath);
    if (this.resolving.has(dottedPath)) {
      throw new Error(`${this.fileName}: circular variable reference through "${dottedPath}"`);
    }
    this.resolving.add(dottedPath);
    try {
      let current: unknown = this.raw;
      const walked: string[] = [];
      for (const segment of dottedPath.split('.').filter(Boolean)) {
        // Resolve as we walk, so a variable that yields an object can be indexed into.
        current = this.resolveShallow(current, walked.join('.'));
        if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
        else if (isPlainObject(current)) current = current[segment];
        else current = undefined;
        walked.push(segment);
        if (current === undefined) break;
      }
      const resolved = current === undefined ? undefined : this.resolveValue(current, dottedPath);
      this.cache.set(dottedPath, resolved);
      return resolved;
    } finally {
      this.resolving.delete(dottedPath);
    }
  }

  private resolveShallow(value: unknown, where: string): unknown {
    return typeof value === 'string' ? this.resolveString(value, where) : value;
  }

  private resolveString(text: string, where: string): unknown {
    const parts = scanVariables(text);
    if (parts.length === 1 && parts[0].kind === 'variable') {
      // The whole string is one variable: its value keeps its type (object, number, ...).
      return this.evaluate(parts[0].expression, where);
    }
    if (!parts.some((part) => part.kind === 'variable')) {
      return parts.map((part) => part.text).join('');
    }
    return parts
      .map((part) => {
        if (part.kind === 'text') return part.text;
        const value = this.evaluate(part.expression, where);
        if (value === null || typeof value === 'object') {
          throw new Error(`${this.fileName}: variable \${${part.expression}} at "${where}" resolves to a non-scalar value and cannot be embedded in a string`);
        }
        return String(value);
      })
      .join('');
  }

  /** Evaluates the inside of `${...}`: the first source with a value wins. */
  private evaluate(expression: string, where: string): unknown {
    const sources = splitSources(expression).map((source) => parseSource(source, expression, this.fileName));
    for (const source of sources) {
      const value = this.evaluateSource(source, where);
      if (value !== undefined && value !== null) return value;
    }
    throw new Error(
      `${this.fileName}: cannot resolve variable \${${expression}} at "${where}"` +
        (sources.length > 1 ? ' (no source or fallback has a value)' : ' (it has no value and no fallback)'),
    );
  }

  private evaluateSource(source: Source, where: string): unknown {
    if (source.kind === 'literal') return source.value;
    if (source.kind === 'nested') return this.evaluate(source.expression, where);
    const address = String(this.resolveString(source.address, where));
    switch (source.type) {
      case 'self':
        return this.resolvePath(address);
      case 'sls':
        if (address === 'stage') return this.vars.stage;
        break;
      case 'opt':
        return this.vars.options[address];
      case 'aws':
        if (address === 'region') return this.vars.region;
        if (address === 'accountId') return this.vars.accountId;
        break;
      case 'env':
        return this.vars.env[address];
      default:
        break;
    }
    throw new Error(
      `${this.fileName}: unsupported variable \${${source.text}} at "${where}"; the local runtime resolves ` +
        '${self:...}, ${sls:stage}, ${opt:...}, ${aws:region}, ${aws:accountId} and ${env:...}',
    );
  }
}

type Part = { kind: 'text'; text: string } | { kind: 'variable'; expression: string; text: string };

/** Splits a string into literal text and top-level `${type:...}` variables (see the header). */
function scanVariables(text: string): Part[] {
  const parts: Part[] = [];
  let buffer = '';
  let index = 0;
  while (index < text.length) {
    if (text[index] === '\\' && text.startsWith('${', index + 1)) {
      buffer += '${';
      index += 3;
      continue;
    }
    if (text.startsWith('${', index) && /^[a-z][a-zA-Z0-9]*(?::(?!:)|\()/.test(text.slice(index + 2))) {
      const end = findClosingBrace(text, index + 2);
      if (end < 0) throw new Error(`Unterminated variable in "${text}"`);
      if (buffer) parts.push({ kind: 'text', text: buffer });
      buffer = '';
      parts.push({ kind: 'variable', expression: text.slice(index + 2, end), text: text.slice(index, end + 1) });
      index = end + 1;
      continue;
    }
    buffer += text[index];
    index += 1;
  }
  if (buffer || parts.length === 0) parts.push({ kind: 'text', text: buffer });
  return parts;
}

/**
 * Walks `text` from `start`, skipping quoted strings and nested `${…}`, and calls `visit` for each
 * top-level character until it returns true; answers that index, or -1.
 */
function scanTopLevel(text: string, start: number, visit: (char: string, index: number) => boolean): number {
  let depth = 0;
  let quote: string | null = null;
  for (let index = start; index < text.length; index += 1) {
    const char = text[index];
    if (quote) {
      if (char === quote) quote = null;
      continue;
    }
    if (char === "'" || char === '"') quote = char;
    else if (char === '$' && text[index + 1] === '{') {
      depth += 1;
      index += 1;
    } else if (char === '}' && depth > 0) depth -= 1;
    else if (depth === 0 && visit(char, index)) return index;
  }
  return -1;
}

/** Index of the `}` closing a variable whose content starts at `start`, skipping nested `${}` and quotes. */
function findClosingBrace(text: string, start: number): number {
  return scanTopLevel(text, start, (char) => char === '}');
}

/** Splits `opt:stage, ${env:X}, 'dev'` at top-level commas. */
function splitSources(expression: string): string[] {
  const sources: string[] = [];
  let from = 0;
  scanTopLevel(expression, 0, (char, index) => {
    if (char === ',') {
      sources.push(expression.slice(from, index));
      from = index + 1;
    }
    return false;
  });
  sources.push(expression.slice(from));
  return sources.map((source) => source.trim());
}

function parseSource(source: string, expression: string, fileName: string): Source {
  if (source === '') throw new Error(`${fileName}: empty source in variable \${${expression}}`);
  if (source.startsWith('${') && source.endsWith('}') && findClosingBrace(source, 2) === source.length - 1) {
    return { kind: 'nested', expression: source.slice(2, -1) };
  }
  if ((source.startsWith("'") && source.endsWith("'")) || (source.startsWith('"') && source.endsWith('"'))) {
    return { kind: 'literal', value: source.slice(1, -1) };
  }
  // Sources with parameters (`file(...)`, `cf(...)`, ...) are not in the local subset.
  const withParams = /^([a-z][a-zA-Z0-9]*)\(/.exec(source);
  if (withParams) return { kind: 'variable', type: `${withParams[1]}()`, address: '', text: source };
  const typed = /^([a-z][a-zA-Z0-9]*):(.*)$/s.exec(source);
  if (typed) return { kind: 'variable', type: typed[1], address: typed[2].trim(), text: source };
  if (source === 'true') return { kind: 'literal', value: true };
  if (source === 'false') return { kind: 'literal', value: false };
  if (source === 'null') return { kind: 'literal', value: null };
  if (source !== '' && !Number.isNaN(Number(source))) return { kind: 'literal', value: Number(source) };
  throw new Error(`${fileName}: cannot parse source "${source}" in variable \${${expression}}`);
}

function join(where: string, key: string): string {
  return where ? `${where}.${key}` : key;
}
