/**
 * The partials a template includes, followed through their own includes, and the rules the chain
 * keeps: no partial includes itself (directly or through others), and no chain is deeper than
 * `maxPartialDepth`. Checked when a prompt or partial is saved or a partial version published, and
 * again before every render, since partials change after the templates that include them.
 */
import { badRequest } from '../core/errors';
import { findPartials } from './saved-prompts';
import { maxPartialDepth, partialChainTooDeep, partialNames, partialRecursion } from './template';

/** The most partials one template may reach: each is a read per render. */
export const maxIncludedPartials = 100;
/** The most text those partials may hold together: each is parsed per render (about 1 µs a character). */
export const maxIncludedChars = 1024 * 1024;

export interface IncludedPartials {
  /** Each partial reached that exists, by name (no prototype: any name is just a key). */
  texts: Record<string, string>;
  /** The names each found partial includes. */
  includes: Map<string, string[]>;
}

/**
 * Reads the partials `roots` name, level by level, until no new name turns up. `given` stands in
 * for the stored text of a partial (the version being saved).
 */
export async function loadIncludedPartials(
  workspaceId: string,
  roots: readonly string[],
  options: { fresh?: boolean; given?: Record<string, string>; param?: string } = {},
): Promise<IncludedPartials> {
  const texts: Record<string, string> = Object.create(null);
  const includes = new Map<string, string[]>();
  const seen = new Set<string>();
  let chars = 0;
  let wanted = [...new Set(roots)];
  while (wanted.length > 0) {
    for (const name of wanted) seen.add(name);
    if (seen.size > maxIncludedPartials) {
      throw badRequest(
        `The template reaches more than ${maxIncludedPartials} partials (counting the partials they include); the limit is ${maxIncludedPartials}.`,
        options.param ?? 'string',
        'too_many_partials',
      );
    }
    const given = options.given ?? {};
    const fromStore = wanted.filter((name) => !Object.hasOwn(given, name));
    const found: Record<string, string> = Object.assign(Object.create(null), await findPartials(workspaceId, fromStore, options));
    for (const name of wanted) if (Object.hasOwn(given, name)) found[name] = given[name]!;
    const next = new Set<string>();
    for (const name of wanted) {
      if (!Object.hasOwn(found, name)) continue;
      texts[name] = found[name]!;
      chars += found[name]!.length;
      if (chars > maxIncludedChars) {
        throw badRequest(
          `The partials the template reaches hold more than ${maxIncludedChars.toLocaleString('en-US')} characters together; the limit is ${maxIncludedChars.toLocaleString('en-US')}.`,
          options.param ?? 'string',
          'partials_too_large',
        );
      }
      const names = namesIn(name, found[name]!);
      includes.set(name, names);
      for (const included of names) if (!seen.has(included)) next.add(included);
    }
    wanted = [...next];
  }
  return { texts, includes };
}

function namesIn(name: string, text: string): string[] {
  try {
    return partialNames(text);
  } catch (error) {
    throw badRequest(
      `Partial "${name}" is not a valid Mustache template: ${(error as Error).message}. Fix it with PUT /v1/prompts/partials/${name}.`,
      'string',
      'invalid_prompt_template',
    );
  }
}

/**
 * Refuses a chain of includes from `roots` that loops or is deeper than `maxPartialDepth` (a root is
 * at depth 1), naming the chain. Partials that do not exist end a chain.
 */
export function checkPartialChains(roots: readonly string[], { includes }: IncludedPartials, param = 'string'): void {
  // The longest chain starting at each partial, and its next link, so a chain found deep through a
  // partial already walked can still be named whole.
  const longest = new Map<string, { length: number; next?: string }>();
  const path: string[] = [];
  const chainFrom = (name: string): string[] => {
    const chain: string[] = [];
    for (let at: string | undefined = name; at !== undefined; at = longest.get(at)?.next) chain.push(at);
    return chain;
  };
  const visit = (name: string): number => {
    if (!includes.has(name)) return 0;
    const known = longest.get(name);
    if (known) {
      if (path.length + known.length > maxPartialDepth) throw partialChainTooDeep([...path, ...chainFrom(name)], param);
      return known.length;
    }
    if (path.includes(name)) throw partialRecursion([...path.slice(path.indexOf(name)), name], param);
    if (path.length >= maxPartialDepth) throw partialChainTooDeep([...path, name], param);
    path.push(name);
    let best: { length: number; next?: string } = { length: 1 };
    for (const included of includes.get(name)!) {
      const length = visit(included);
      if (length + 1 > best.length) best = { length: length + 1, next: included };
    }
    path.pop();
    longest.set(name, best);
    return best.length;
  };
  for (const root of new Set(roots)) visit(root);
}
