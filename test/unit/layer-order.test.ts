import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cruise, type ICruiseOptions, type ICruiseResult, type IFlattenedRuleSet } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/repo-root';

/**
 * The layer order of lib/ (docs/architecture.md, "Import rules"), as `.dependency-cruiser.cjs`
 * states it: every import of lib/ and functions/, type-only ones included, is checked against it,
 * and the failure lists each import that crosses a rule.
 */
const config = createRequire(import.meta.url)(path.join(repoRoot, '.dependency-cruiser.cjs')) as {
  forbidden: NonNullable<IFlattenedRuleSet['forbidden']>;
  options: ICruiseOptions & { tsConfig: { fileName: string } };
};

async function cruiseTree(baseDir: string, roots: string[]): Promise<ICruiseResult> {
  const { tsConfig, ...options } = config.options;
  const { output } = await cruise(roots, { ...options, baseDir, validate: true, ruleSet: { forbidden: config.forbidden } }, undefined, {
    tsConfig: extractTSConfig(path.join(repoRoot, tsConfig.fileName)),
  });
  return output as ICruiseResult;
}

const violationsOf = (result: ICruiseResult) => result.summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} → ${to}`);

describe('layer order of lib/', () => {
  let result: ICruiseResult;
  beforeAll(async () => {
    result = await cruiseTree(repoRoot, ['lib', 'functions', 'cli']);
  }, 60_000);

  it('reads every module, and counts type-only imports', () => {
    expect(result.modules.filter(({ source }) => source.startsWith('lib/')).length).toBeGreaterThan(250);
    const plan = result.modules.find(({ source }) => source === 'lib/routing/plan.ts');
    expect(plan?.dependencies.find(({ resolved }) => resolved === 'lib/config/types.ts')?.dependencyTypes).toContain('type-only');
  });

  it('has no import that crosses a rule', () => {
    expect(violationsOf(result)).toEqual([]);
  });

  it('gives every folder of lib/ a rank', () => {
    const folders = new Set(result.modules.flatMap(({ source }) => /^lib\/([^/]+)\//.exec(source)?.[1] ?? []));
    const ranked = new Set(config.forbidden.flatMap(({ name }) => /^layer-order:(.+)$/.exec(name ?? '')?.[1] ?? []));
    expect([...folders].filter((folder) => !ranked.has(folder))).toEqual([]);
  });
});

describe('the layer rules', () => {
  // A small tree that breaks each kind of rule once: the rules must catch what they promise to.
  let root: string;
  let found: string[];
  const files: Record<string, string> = {
    'lib/core/a.ts': "import { b } from './b';\nexport const a = (): number => b();\n",
    'lib/core/b.ts': "import { a } from './a';\nexport const b = (): number => a();\n",
    'lib/core/low.ts': "import { stored } from '../store/stored';\nexport const low = stored;\n",
    'lib/store/stored.ts': 'export const stored = 1;\n',
    'lib/http/types.ts': 'export interface GatewayResponse { status: number }\n',
    'lib/inference/route.ts':
      "import type { GatewayResponse } from '../http/types';\nexport const answer = (response: GatewayResponse): number => response.status;\n",
    'lib/providers/signer.ts': "import { SignatureV4 } from '@smithy/signature-v4';\nexport const signer = SignatureV4;\n",
    'lib/routing/event.ts': "import type { APIGatewayProxyEvent } from 'aws-lambda';\nexport type Event = APIGatewayProxyEvent;\n",
    'lib/misc/thing.ts': 'export const thing = 1;\n',
    'lib/config/uses-misc.ts': "import { thing } from '../misc/thing';\nexport const misc = thing;\n",
  };

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'layer-order-'));
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    }
    found = violationsOf(await cruiseTree(root, ['lib']));
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it.each([
    ['no-circular', 'lib/core/a.ts → lib/core/b.ts'],
    ['layer-order:core', 'lib/core/low.ts → lib/store/stored.ts'],
    ['no-inference-to-http', 'lib/inference/route.ts → lib/http/types.ts'],
    ['layer-order:inference', 'lib/inference/route.ts → lib/http/types.ts'],
    ['aws-sdk-where-needed', 'lib/providers/signer.ts → @smithy/signature-v4'],
    ['lambda-at-the-edge', 'lib/routing/event.ts → aws-lambda'],
    ['unranked-folder', 'lib/config/uses-misc.ts → lib/misc/thing.ts'],
  ])('%s catches %s', (rule, crossing) => {
    expect(found).toContain(`${rule}: ${crossing}`);
  });
});
