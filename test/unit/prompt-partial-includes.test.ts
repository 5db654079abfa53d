import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import { checkPartialChains, type IncludedPartials } from '../../lib/prompts/partial-includes';
import { partialNames } from '../../lib/prompts/template';

/** The graph the loader would build from these partial texts. */
function included(texts: Record<string, string>): IncludedPartials {
  return { texts, includes: new Map(Object.entries(texts).map(([name, text]) => [name, partialNames(text)])) };
}

function refusal(roots: string[], texts: Record<string, string>, param?: string) {
  try {
    checkPartialChains(roots, included(texts), param);
  } catch (error) {
    if (error instanceof GatewayError) return { status: error.status, ...error.toBody().error };
    throw error;
  }
  throw new Error('expected a GatewayError');
}

const chain = (levels: number, prefix = 'p') =>
  Object.fromEntries(Array.from({ length: levels }, (_, index) => [`${prefix}${index + 1}`, index + 1 < levels ? `{{>${prefix}${index + 2}}}` : 'end']));

describe('partial chains', () => {
  it('refuses a partial that includes itself, directly or through others, naming the loop', () => {
    expect(refusal(['a'], { a: 'x {{#s}}{{>a}}{{/s}}' })).toMatchObject({
      status: 400,
      code: 'partial_recursion',
      param: 'string',
      message: expect.stringContaining('a → a'),
    });
    expect(refusal(['a'], { a: '{{>b}}', b: '{{>c}}', c: '{{>a}}' })).toMatchObject({
      code: 'partial_recursion',
      message: expect.stringContaining('a → b → c → a'),
    });
    // A loop below the root is named from where it starts.
    expect(refusal(['top'], { top: '{{>b}}', b: '{{>c}}', c: '{{>b}}' }, 'version')).toMatchObject({
      param: 'version',
      message: expect.stringContaining('b → c → b'),
    });
  });

  it('allows 10 levels and refuses 11, naming the chain and the limit', () => {
    expect(() => checkPartialChains(['p1'], included(chain(10)))).not.toThrow();
    const refused = refusal(['p1'], chain(11));
    expect(refused).toMatchObject({ code: 'partial_chain_too_deep', message: expect.stringContaining('the limit is 10 levels') });
    expect(refused.message).toContain('p1 → p2 → p3 → p4 → p5 → p6 → p7 → p8 → p9 → p10 → p11');
  });

  it('finds the deepest chain even when a shorter path reached a partial first', () => {
    // p5 is reached first at depth 3 through `short`, later at depth 6 through p1..p4: the chain through p1 is the one to name.
    const texts = { root: '{{>short}}{{>p1}}', short: '{{>p5}}', ...chain(9) };
    expect(() => checkPartialChains(['root'], included(texts))).not.toThrow();
    expect(refusal(['root'], { ...texts, p9: '{{>extra}}', extra: 'x' })).toMatchObject({
      code: 'partial_chain_too_deep',
      message: expect.stringContaining('(root → p1 → p2 → p3 → p4 → p5 → p6 → p7 → p8 → p9 → extra)'),
    });
  });

  it('ends a chain at a partial that does not exist, and shares partials without calling it a loop', () => {
    expect(() => checkPartialChains(['a'], included({ a: '{{>missing}} {{>b}} {{>b}}', b: '{{>c}}', c: 'x' }))).not.toThrow();
    expect(() => checkPartialChains(['a', 'b'], included({ a: '{{>c}}', b: '{{>c}}', c: 'x' }))).not.toThrow();
  });
});
