/**
 * The OpenAPI document against serverless.yml, the OpenAPI 3.1 schema, and its committed copy: every
 * /v1 route API Gateway serves is described (the pass-through aside), nothing else is, and
 * docs/openapi.json is what `npm run openapi` writes now.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { loadServerlessConfig } from '../../lib/local/template/serverless-config';
import { openApiDocument } from '../../lib/openapi/document';
import { openApiText } from '../../lib/openapi/document-text';
import { definedRoutes } from '../../lib/openapi/defined-routes';
import { handlerBodies } from '../../lib/openapi/handler-bodies';
import { repoRoot } from '../support/repo-root';

const passThrough = '/v1/{proxy+}';
const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

const template = loadServerlessConfig({ file: path.join(repoRoot, 'serverless.yml'), stage: 'ci' });
const declared = template.routes.filter((route) => route.path.startsWith('/v1/') && route.path !== passThrough);
const document = openApiDocument('0.0.0');
const described = Object.entries(document.paths).flatMap(([route, item]) =>
  Object.keys(item)
    .filter((key) => methods.includes(key))
    .map((method) => ({ method: method.toUpperCase(), path: route })),
);

describe('the OpenAPI document', () => {
  it('describes every /v1 route of serverless.yml but the pass-through', () => {
    expect(declared.length).toBeGreaterThan(50);
    // An ANY resource (a streamed function that dispatches itself) needs at least one of its methods.
    const missing = declared.filter((route) =>
      route.method === 'ANY' ? !described.some((op) => op.path === route.path) : !described.some((op) => op.path === route.path && op.method === route.method),
    );
    expect(missing.map((route) => `${route.method} ${route.path}`)).toEqual([]);
  });

  it('describes no route that serverless.yml does not declare', () => {
    const extra = described.filter((op) => !declared.some((route) => route.path === op.path && (route.method === 'ANY' || route.method === op.method)));
    expect(extra.map((op) => `${op.method} ${op.path}`)).toEqual([]);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('gives every operation a unique operationId and keeps its path parameters in step with the path', () => {
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    for (const [route, item] of Object.entries(document.paths)) {
      const names = [...route.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
      for (const [method, op] of Object.entries(item)) {
        const inPath = ((op.parameters ?? []) as { in?: string; name?: string }[]).filter((p) => p.in === 'path').map((p) => p.name);
        expect(inPath.sort(), `${method} ${route}`).toEqual(names);
      }
    }
  });

  it('describes by hand only the bodies of defined routes that have no body schema', () => {
    for (const route of Object.keys(handlerBodies)) {
      const defined = definedRoutes.find((candidate) => `${candidate.method} ${candidate.path}` === route);
      expect(defined, route).toBeDefined();
      expect(defined?.body, `${route} has a schema: describe it there`).toBeUndefined();
    }
  });

  it('is served without a key, and only that route is', () => {
    const open = Object.entries(document.paths).flatMap(([route, item]) =>
      Object.entries(item)
        .filter(([, op]) => Array.isArray(op.security) && op.security.length === 0)
        .map(([method]) => `${method} ${route}`),
    );
    expect(open).toEqual(['get /v1/openapi.json']);
  });

  it('holds nothing of the environment and nothing shaped as a credential', () => {
    const text = openApiText();
    // The generator reads no setting; a long value of this process's environment in the text would be one leaking in.
    const leaked = Object.entries(process.env).filter(([, value]) => value !== undefined && value.length >= 16 && text.includes(value));
    expect(leaked.map(([name]) => name)).toEqual([]);
    expect(text).not.toMatch(/gwk_[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|-----BEGIN/);
  });

  it('is committed as docs/openapi.json as `npm run openapi` writes it', () => {
    const committed = readFileSync(path.join(repoRoot, 'docs', 'openapi.json'), 'utf8');
    // A failure here means the routes changed without `npm run openapi`.
    expect(committed === openApiText(), 'docs/openapi.json is out of date: run npm run openapi').toBe(true);
  });
});
