/**
 * What goes into the function bundles, read from the esbuild metafiles the build writes beside them
 * (`.build/functions/<name>/meta.json`).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadServerlessConfig } from '../../lib/local/template/serverless-config';
import { PACKAGE_TIMEOUT_MS, PROJECT_ROOT, STAGE, builtFunctions } from './packaged-template';

/** Every source file esbuild read for a function's bundle, relative to the project root. */
let bundleInputs: Map<string, string[]>;

beforeAll(async () => {
  await builtFunctions();
  const config = loadServerlessConfig({ file: path.join(PROJECT_ROOT, 'serverless.yml'), stage: STAGE });
  bundleInputs = new Map(
    config.functions.map((fn) => {
      const meta = JSON.parse(readFileSync(path.join(PROJECT_ROOT, '.build', 'functions', fn.name, 'meta.json'), 'utf8'));
      return [fn.name, Object.keys(meta.inputs as Record<string, unknown>)];
    }),
  );
}, PACKAGE_TIMEOUT_MS);

describe('function bundles', () => {
  it('take AWS credentials from the environment, without the rest of the SDK’s default chain', () => {
    // The chain's other links and the STS/SSO clients they call (lib/store/lambda-credentials.ts).
    const chain = /node_modules\/@aws-sdk\/(credential-provider-(?!env\/)[^/]+|nested-clients|token-providers)\//;
    for (const [name, inputs] of bundleInputs) {
      expect(inputs.filter((input) => chain.test(input)), name).toEqual([]);
      if (inputs.some((input) => input.includes('node_modules/@aws-sdk/client-'))) {
        expect(inputs, name).toContain('lib/store/lambda-credentials.ts');
      }
    }
  });
});
