/**
 * The local runtime's route table (read from serverless.yml by lib/local/template/serverless-config.ts) is the
 * one API Gateway gets: same METHOD + path → function, same streaming mode and integration timeout.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadServerlessConfig, type ServerlessConfig } from '../../lib/local/template/serverless-config';
import { PACKAGE_TIMEOUT_MS, PROJECT_ROOT, STAGE, packagedTemplate, templateRoutes, uriSuffix, type TemplateRoute } from './packaged-template';

let local: ServerlessConfig;
let packaged: TemplateRoute[];

beforeAll(async () => {
  local = loadServerlessConfig({ file: path.join(PROJECT_ROOT, 'serverless.yml'), stage: STAGE });
  packaged = templateRoutes(await packagedTemplate());
}, PACKAGE_TIMEOUT_MS);

const sorted = (keys: Iterable<string>) => [...keys].sort();

describe('route table', () => {
  it('maps the same METHOD path → function locally and in the packaged template', () => {
    const localRoutes = sorted(new Set(local.routes.map((r) => `${r.method} ${r.path} → ${r.functionName}`)));
    const packagedRoutes = sorted(new Set(packaged.map((r) => `${r.method} ${r.path} → ${r.functionName}`)));
    expect(localRoutes.length).toBeGreaterThan(0);
    expect(localRoutes).toEqual(packagedRoutes);
    // No route is declared twice.
    expect(local.routes.length).toBe(localRoutes.length);
  });

  it('agrees on streaming and integration timeouts', () => {
    const describeLocal = sorted(local.routes.map((r) => `${r.method} ${r.path}: ${r.streaming ? 'STREAM' : 'BUFFERED'} ${r.integrationTimeoutMs}`));
    const describePackaged = sorted(
      packaged.map((r) => {
        const streaming = r.integration.ResponseTransferMode === 'STREAM';
        expect(uriSuffix(r.integration.Uri)).toBe(streaming ? '/response-streaming-invocations' : '/invocations');
        return `${r.method} ${r.path}: ${streaming ? 'STREAM' : 'BUFFERED'} ${r.integration.TimeoutInMillis ?? 29000}`;
      }),
    );
    expect(describeLocal).toEqual(describePackaged);
  });

  it('lists every packaged function locally with its artifact', () => {
    const packagedFunctions = new Set(packaged.map((r) => r.functionName));
    const localFunctions = new Map(local.functions.map((fn) => [fn.name, fn]));
    for (const name of packagedFunctions) {
      expect(localFunctions.get(name)?.artifact, name).toBe(`.build/artifacts/${name}.zip`);
    }
  });
});
