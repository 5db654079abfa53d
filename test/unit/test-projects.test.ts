import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config';
import { repoRoot } from '../support/repo-root';

interface ProjectEntry {
  test: { name: string; include: string[]; globalSetup?: string[] };
}

const projects = (config.test?.projects ?? []) as ProjectEntry[];

/** The folder a project's `test/<folder>/**\/*.test.ts` pattern covers. */
function folderOf(pattern: string): string {
  const match = /^(test\/[\w-]+\/)\*\*\/\*\.test\.ts$/.exec(pattern);
  if (!match) throw new Error(`A project include this test cannot read: ${pattern}`);
  return match[1];
}

function testFiles(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return testFiles(relative);
    return entry.name.endsWith('.test.ts') ? [relative] : [];
  });
}

describe('vitest projects', () => {
  // A test file no project includes would never run, and nothing else would say so.
  it('give every test file exactly one project', () => {
    const folders = projects.map((project) => ({ name: project.test.name, folders: project.test.include.map(folderOf) }));
    const unclaimed = testFiles('test').filter((file) => folders.filter((project) => project.folders.some((folder) => file.startsWith(folder))).length !== 1);
    expect(unclaimed).toEqual([]);
  });

  it('start nothing for the unit tests, and the shared gateway for the others', () => {
    const setups = Object.fromEntries(projects.map((project) => [project.test.name, project.test.globalSetup ?? []]));
    expect(setups).toEqual({
      unit: [],
      integration: ['test/support/global-setup.ts'],
      e2e: ['test/support/global-setup.ts'],
      package: ['test/support/global-setup.ts'],
      fuzz: ['test/support/global-setup.ts'],
      heavy: [],
    });
    expect(config.test?.globalSetup, 'a root global setup runs whichever projects are selected').toBeUndefined();
  });
});
