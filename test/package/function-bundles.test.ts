/**
 * What goes into the function bundles, read from the esbuild metafiles the build writes beside them
 * (`.build/functions/<name>/meta.json`): index.mjs and the chunks it imports, statically or with
 * `import()`.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadServerlessConfig } from '../../lib/local/template/serverless-config';
import { PACKAGE_TIMEOUT_MS, PROJECT_ROOT, STAGE, builtFunctions } from './packaged-template';

interface Output {
  imports: { path: string; kind: string; external?: boolean }[];
  inputs: Record<string, { bytesInOutput: number }>;
}

/** Every source file esbuild read for a function's bundle, relative to the project root. */
let bundleInputs: Map<string, string[]>;
/** The source files with code in a function's files (esbuild also reads files it then shakes out). */
let bundleContents: Map<string, string[]>;
/** The source files with code in what a cold start loads: index.mjs and the chunks it imports statically. */
let startContents: Map<string, string[]>;
/** The files of a function's bundle (index.mjs and its chunks), by name. */
let bundleFiles: Map<string, string[]>;
/** The serverless.yml artifact of each function. */
let artifacts: Map<string, string>;

const withCode = (outputs: Output[]) => [
  ...new Set(outputs.flatMap((output) => Object.entries(output.inputs).flatMap(([input, { bytesInOutput }]) => (bytesInOutput > 0 ? [input] : [])))),
];

/** index.mjs and the outputs it imports statically, directly or through another chunk. */
function loadedAtStart(outputs: Record<string, Output>): Output[] {
  const entry = Object.keys(outputs).find((file) => path.basename(file) === 'index.mjs')!;
  const loaded = new Set([entry]);
  const pending = [entry];
  while (pending.length > 0) {
    for (const { path: imported, kind, external } of outputs[pending.pop()!]!.imports) {
      if (kind === 'import-statement' && !external && !loaded.has(imported)) {
        loaded.add(imported);
        pending.push(imported);
      }
    }
  }
  return [...loaded].map((file) => outputs[file]!);
}

/** The names of the files in a zip, from its central directory. */
function zipEntryNames(zip: Buffer): string[] {
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(end + 10);
  let offset = zip.readUInt32LE(end + 16);
  const names: string[] = [];
  for (let index = 0; index < count; index++) {
    const nameLength = zip.readUInt16LE(offset + 28);
    names.push(zip.subarray(offset + 46, offset + 46 + nameLength).toString('utf8'));
    offset += 46 + nameLength + zip.readUInt16LE(offset + 30) + zip.readUInt16LE(offset + 32);
  }
  return names;
}

beforeAll(async () => {
  await builtFunctions();
  const config = loadServerlessConfig({ file: path.join(PROJECT_ROOT, 'serverless.yml'), stage: STAGE });
  const metas = config.functions.map(
    (fn) => [fn.name, JSON.parse(readFileSync(path.join(PROJECT_ROOT, '.build', 'functions', fn.name, 'meta.json'), 'utf8'))] as const,
  );
  bundleInputs = new Map(metas.map(([name, meta]) => [name, Object.keys(meta.inputs as Record<string, unknown>)]));
  bundleContents = new Map(metas.map(([name, meta]) => [name, withCode(Object.values(meta.outputs as Record<string, Output>))]));
  startContents = new Map(metas.map(([name, meta]) => [name, withCode(loadedAtStart(meta.outputs as Record<string, Output>))]));
  bundleFiles = new Map(
    metas.map(([name, meta]) => [
      name,
      Object.keys(meta.outputs as Record<string, Output>)
        .map((file) => path.basename(file))
        .sort(),
    ]),
  );
  artifacts = new Map(config.functions.map((fn) => [fn.name, fn.artifact]));
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

  it('are zipped whole: index.mjs at the root, with every chunk it imports beside it', () => {
    for (const [name, files] of bundleFiles) {
      expect(files, name).toContain('index.mjs');
      // The console's page files sit in the zip beside its code (the test below).
      const code = zipEntryNames(readFileSync(path.join(PROJECT_ROOT, artifacts.get(name)!))).filter((entry) => !entry.startsWith('console/'));
      expect(code.sort(), name).toEqual(files);
    }
  });

  it('on the inference path load the native providers, the Responses translation, KMS, jose and the guardrail checks only when first used', () => {
    const lazy = [
      /^lib\/providers\/(anthropic|azure-ai|azure-openai|bedrock|cohere|google|vertex-ai)\/adapter\.ts$/,
      /^lib\/providers\/responses-format\/(over-chat|native)\.ts$/,
      /node_modules\/@aws-sdk\/client-kms\//,
      /node_modules\/jose\//,
      /^lib\/guardrails\/(registry|check-runner|validate-checks)\.ts$/,
      /^lib\/guardrails\/checks\//,
      /node_modules\/@cfworker\/json-schema\//,
    ];
    for (const name of ['chatCompletions', 'completions', 'embeddings', 'passthrough']) {
      const atStart = startContents.get(name)!;
      const anywhere = bundleContents.get(name)!;
      for (const pattern of lazy) {
        expect(
          atStart.filter((input) => pattern.test(input)),
          `${name}: ${pattern}`,
        ).toEqual([]);
        expect(
          anywhere.some((input) => pattern.test(input)),
          `${name}: ${pattern}`,
        ).toBe(true);
      }
    }
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
