/**
 * What goes into the function bundles, read from the esbuild metafiles the build writes beside them
 * (`.build/functions/<name>/meta.json`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadServerlessConfig } from '../../lib/local/template/serverless-config';
import { PACKAGE_TIMEOUT_MS, PROJECT_ROOT, STAGE, builtFunctions } from './packaged-template';

/** Every source file esbuild read for a function's bundle, relative to the project root. */
let bundleInputs: Map<string, string[]>;
/** The source files with code in a function's bundle (esbuild also reads files it then shakes out). */
let bundleContents: Map<string, string[]>;

beforeAll(async () => {
  await builtFunctions();
  const config = loadServerlessConfig({ file: path.join(PROJECT_ROOT, 'serverless.yml'), stage: STAGE });
  const metas = config.functions.map(
    (fn) => [fn.name, JSON.parse(readFileSync(path.join(PROJECT_ROOT, '.build', 'functions', fn.name, 'meta.json'), 'utf8'))] as const,
  );
  bundleInputs = new Map(metas.map(([name, meta]) => [name, Object.keys(meta.inputs as Record<string, unknown>)]));
  bundleContents = new Map(
    metas.map(([name, meta]) => {
      const [output] = Object.values(meta.outputs as Record<string, { inputs: Record<string, { bytesInOutput: number }> }>);
      return [name, Object.entries(output!.inputs).flatMap(([input, { bytesInOutput }]) => (bytesInOutput > 0 ? [input] : []))];
    }),
  );
}, PACKAGE_TIMEOUT_MS);

describe('function bundles', () => {
  it('take AWS credentials from the environment, without the rest of the SDK’s default chain', () => {
    // The chain's other links and the STS/SSO clients they call (lib/store/lambda-credentials.ts).
    const chain = /node_modules\/@aws-sdk\/(credential-provider-(?!env\/)[^/]+|nested-clients|token-providers)\//;
    for (const [name, inputs] of bundleInputs) {
      expect(
        inputs.filter((input) => chain.test(input)),
        name,
      ).toEqual([]);
      if (inputs.some((input) => input.includes('node_modules/@aws-sdk/client-'))) {
        expect(inputs, name).toContain('lib/store/lambda-credentials.ts');
      }
    }
  });

  it('on the inference path carry no S3 client: the cache’s large bodies go through lib/store/s3-object.ts', () => {
    // The functions bench/lib/bundles.ts holds to the size target; the control function `cache`
    // keeps the client for the purge's DeleteObjects.
    for (const name of ['chatCompletions', 'completions', 'embeddings', 'passthrough']) {
      const contents = bundleContents.get(name)!;
      expect(contents, name).toContain('lib/store/s3-object.ts');
      expect(
        contents.filter((input) => /node_modules\/@aws-sdk\/(client-s3|middleware-sdk-s3|checksums)\//.test(input)),
        name,
      ).toEqual([]);
    }
    expect(bundleContents.get('cache')!.some((input) => input.includes('node_modules/@aws-sdk/client-s3/'))).toBe(true);
  });

  it('keep the template engine and the prompt store in the prompt functions only', () => {
    for (const name of ['chatCompletions', 'completions', 'embeddings', 'passthrough']) {
      expect(
        bundleContents
          .get(name)!
          .filter((input) => input.includes('node_modules/mustache/') || input.startsWith('lib/prompts/') || input === 'lib/store/prompts.ts'),
        name,
      ).toEqual([]);
    }
    expect(bundleContents.get('promptCompletions')!).toEqual(expect.arrayContaining(['lib/prompts/run-route.ts', 'lib/inference/run-inference.ts']));
    expect(bundleContents.get('promptCompletions')!.some((input) => input.includes('node_modules/mustache/'))).toBe(true);
  });

  it('zip the console’s page, script and stylesheet beside the console function’s code, where the local runtime finds them too', () => {
    // A zip's central directory keeps each entry's name as it is.
    const zip = readFileSync(path.join(PROJECT_ROOT, '.build', 'artifacts', 'console.zip')).toString('latin1');
    for (const file of ['index.mjs', 'console/index.html', 'console/console.js', 'console/console.css']) {
      expect(zip, file).toContain(file);
      expect(existsSync(path.join(PROJECT_ROOT, '.build', 'functions', 'console', file)), file).toBe(true);
    }
    // The page's code is the browser's own bundle, never the function's.
    expect(bundleInputs.get('console')!.filter((input) => input.startsWith('console/'))).toEqual([]);
  });
});
