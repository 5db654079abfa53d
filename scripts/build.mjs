#!/usr/bin/env node
// node scripts/build.mjs [--local] [--strict]
//   --local   also bundle the local runtime (lib/local/main.ts, scripts/bootstrap.ts)
//   --strict  fail when a function in serverless.yml has no handler source (no placeholder artifacts)
import { build } from './build-lib.mjs';

const args = new Set(process.argv.slice(2));
for (const arg of args) {
  if (arg !== '--local' && arg !== '--strict') {
    console.error(`usage: node scripts/build.mjs [--local] [--strict] (unknown argument ${arg})`);
    process.exit(2);
  }
}

try {
  await build({ local: args.has('--local'), strict: args.has('--strict') });
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}
