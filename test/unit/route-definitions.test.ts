/**
 * The control routes defined with defineRoute are the ones serverless.yml gives their functions:
 * function `apiKeys` serves exactly the routes of `lib/control/api-keys-route.ts`, and its handler
 * (`functions/api-keys.ts`) is built from that module. Every buffered function with http events is
 * a control function, and every route module belongs to one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ControlRoutes } from '../../lib/http/define-route';
import { loadServerlessConfig } from '../../lib/local/template/serverless-config';
import { repoRoot } from '../support/repo-root';

const kebab = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
const camel = (name: string) => name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
const sorted = (routes: Iterable<{ method: string; path: string }>) => [...routes].map(({ method, path }) => `${method} ${path}`).sort();

const template = loadServerlessConfig({ file: path.join(repoRoot, 'serverless.yml'), stage: 'ci' });
const controlFunctions = template.functions.filter((fn) => fn.routes.length > 0 && !fn.streaming);
const routeModules = readdirSync(path.join(repoRoot, 'lib/control')).filter((file) => file.endsWith('-route.ts'));

/**
 * The routes of `lib/control/<name>-route.ts`. The extension stays in the static part of the import:
 * vite turns a template-literal import into a glob over the files it can match, and warns (and
 * leaves the import untransformed) when the static part names no extension.
 */
async function definedRoutes(name: string): Promise<ControlRoutes> {
  const exported = Object.values(await import(`../../lib/control/${name}-route.ts`)).filter(
    (value) => typeof value === 'function' && Array.isArray((value as Partial<ControlRoutes>).routes),
  );
  expect(exported, `${name}-route.ts exports one controlRoutes(...)`).toHaveLength(1);
  return exported[0] as ControlRoutes;
}

describe('control route definitions and serverless.yml', () => {
  it('finds the control functions and the route modules', () => {
    expect(controlFunctions.map((fn) => fn.name).sort()).toEqual(expect.arrayContaining(['apiKeys', 'configs', 'logs', 'providers']));
    expect(routeModules.length).toBeGreaterThanOrEqual(4);
  });

  it.each(controlFunctions.map((fn) => [fn.name, fn] as const))('%s serves exactly the routes its module defines', async (name, fn) => {
    const file = `${kebab(name)}-route.ts`;
    expect(routeModules, `lib/control/${file}`).toContain(file);
    expect(sorted(fn.routes)).toEqual(sorted((await definedRoutes(kebab(name))).routes));
    const handler = readFileSync(path.join(repoRoot, 'functions', `${kebab(name)}.ts`), 'utf8');
    expect(handler).toMatch(new RegExp(`from '\\.\\./lib/control/${kebab(name)}-route'`));
    expect(handler).toMatch(/bufferedHandler\(/);
  });

  it('gives every route module a control function of its name', () => {
    const names = new Set(controlFunctions.map((fn) => fn.name));
    for (const file of routeModules) expect(names, file).toContain(camel(file.replace(/-route\.ts$/, '')));
  });
});
