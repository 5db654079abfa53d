import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/fixtures';

/**
 * The layering rules of `lib/` (docs/architecture.md), checked on every import of every source file:
 * a module that imports across them fails here, with the file and the import named.
 */
interface Import {
  file: string;
  /** The specifier as written. */
  spec: string;
  /** For a relative import, the imported module's path from the repository root, without extension. */
  target?: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(relative);
    return entry.name.endsWith('.ts') ? [relative] : [];
  });
}

const importPattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

function importsOf(file: string): Import[] {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  return [...text.matchAll(importPattern)].map(([, spec]) => ({
    file,
    spec: spec!,
    target: spec!.startsWith('.') ? path.posix.normalize(path.posix.join(path.posix.dirname(file), spec!)).replace(/\.[cm]?[jt]s$/, '') : undefined,
  }));
}

const imports = [...sourceFiles('lib'), ...sourceFiles('functions')].flatMap(importsOf);
const under = (dir: string) => (file: string) => file === dir || file.startsWith(`${dir}/`);
const show = (found: Import[]) => found.map(({ file, spec }) => `${file} imports ${spec}`);

describe('import rules of lib/', () => {
  it('reads the imports of every source file', () => {
    expect(imports.length).toBeGreaterThan(300);
    expect(imports.some(({ file, spec }) => file === 'lib/core/errors.ts' || spec.includes('core/errors'))).toBe(true);
  });

  it('lib/core imports nothing else of lib/', () => {
    expect(show(imports.filter(({ file, target }) => under('lib/core')(file) && target !== undefined && !under('lib/core')(target)))).toEqual([]);
  });

  it('providers never import inference, control, store or the local runtime', () => {
    const forbidden = ['lib/inference', 'lib/control', 'lib/store', 'lib/local'].map(under);
    expect(show(imports.filter(({ file, target }) => under('lib/providers')(file) && target !== undefined && forbidden.some((inside) => inside(target))))).toEqual([]);
  });

  it('routing never imports the routes that use it: inference, control, http or providers', () => {
    const forbidden = ['lib/inference', 'lib/control', 'lib/http', 'lib/providers'].map(under);
    expect(show(imports.filter(({ file, target }) => under('lib/routing')(file) && target !== undefined && forbidden.some((inside) => inside(target))))).toEqual([]);
  });

  it('only lib/store, lib/local and lib/secrets import the AWS SDK', () => {
    const allowed = ['lib/store', 'lib/local', 'lib/secrets'].map(under);
    const found = imports.filter(({ file, spec }) => spec.startsWith('@aws-sdk/') && !allowed.some((inside) => inside(file)));
    expect(show(found)).toEqual([]);
  });

  it('Lambda types and middy stay at the Lambda edge: functions/, lib/http/lambda and the local runtime', () => {
    const edge = ['functions', 'lib/http/lambda', 'lib/local'].map(under);
    const found = imports.filter(({ file, spec }) => (spec === 'aws-lambda' || spec.startsWith('@middy/')) && !edge.some((inside) => inside(file)));
    expect(show(found)).toEqual([]);
  });
});
