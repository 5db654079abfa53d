#!/usr/bin/env node
// The admin CLI is TypeScript under cli/, bundled into .build/cli/gateway-admin.mjs by the build.
// A fresh clone has no bundle yet, and an edited cli/ makes it stale: either way it is built first.
import { existsSync, readdirSync, statSync } from 'node:fs';

const bundle = new URL('../.build/cli/gateway-admin.mjs', import.meta.url);
const sources = new URL('../cli/', import.meta.url);

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = new URL(entry.name + (entry.isDirectory() ? '/' : ''), dir);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

const stale = !existsSync(bundle) || (existsSync(sources) && newestSource(sources) > statSync(bundle).mtimeMs);
if (stale) {
  const { buildCli } = await import('../scripts/build-lib.mjs');
  await buildCli();
}
const { main } = await import(bundle.href);
process.exitCode = await main(process.argv);
