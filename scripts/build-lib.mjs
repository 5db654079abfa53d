// Build: one esbuild ESM bundle per function in serverless.yml, zipped to the function's
// `package.artifact`; with `local`, also the local runtime entry points (npm packages external).
//
//   functions/<kebab-name>.ts → .build/functions/<name>/index.mjs, its chunk-*.mjs (+ meta.json) → <package.artifact>
//   console/main.ts (browser) → .build/functions/console/console/{index.html,console.js,console.css},
//                               zipped beside the console function's index.mjs
//   lib/local/main.ts         → .build/local/main.mjs
//   scripts/bootstrap.ts      → .build/local/bootstrap.mjs
//   lib/local/triggers/log-worker.ts   → .build/local/log-worker.mjs
//   cli/main.ts               → .build/cli/gateway-admin.mjs (always; its npm packages bundled in)
//
// Used by scripts/build.mjs (CLI) and by the test global setup: `await build({ local: true })`.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';
import { parseDocument } from 'yaml';
import yazl from 'yazl';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD_DIR = '.build';

/** Lets CommonJS dependencies bundled into an ESM file use require/__filename/__dirname. */
const CJS_SHIM = [
  "import { createRequire as __gatewayCreateRequire } from 'node:module';",
  "import { fileURLToPath as __gatewayFileURLToPath } from 'node:url';",
  "import { dirname as __gatewayDirname } from 'node:path';",
  'const require = __gatewayCreateRequire(import.meta.url);',
  'const __filename = __gatewayFileURLToPath(import.meta.url);',
  'const __dirname = __gatewayDirname(__filename);',
].join(' ');

/** Zip entries get this mtime (local time, DOS format only) so artifacts are byte-for-byte reproducible. */
const ZIP_MTIME = new Date(2020, 0, 1, 0, 0, 0);

/** chatCompletions → chat-completions */
export function kebabCase(name) {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .replace(/[_\s]+/g, '-')
    .toLowerCase();
}

/**
 * The functions of serverless.yml: name, handler source and artifact. Only the `functions` keys and
 * `package.artifact` are read (CloudFormation tags elsewhere in the file are irrelevant here).
 */
export async function listFunctions(root = ROOT) {
  const text = await readFile(path.join(root, 'serverless.yml'), 'utf8');
  // CloudFormation short-form tags (!Ref, ...) are unknown to this plain parse: they only produce
  // warnings, and their values are not used here.
  const doc = parseDocument(text, { merge: true, logLevel: 'silent' });
  if (doc.errors.length > 0) throw new Error(`serverless.yml: ${doc.errors.map((e) => e.message).join('\n')}`);
  const functions = doc.toJS({ maxAliasCount: -1 })?.functions ?? {};
  return Object.entries(functions).map(([name, definition]) => {
    const artifact = definition?.package?.artifact ?? `${BUILD_DIR}/artifacts/${name}.zip`;
    if (typeof artifact !== 'string' || artifact.includes('${')) {
      throw new Error(`serverless.yml: functions.${name}.package.artifact must be a plain relative path`);
    }
    return { name, source: `functions/${kebabCase(name)}.ts`, artifact };
  });
}

/** Writes via a temporary file and a rename, so concurrent readers never see a partial file. */
async function writeAtomic(file, contents) {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temporary, contents);
  await rename(temporary, file);
}

async function zipBuffer(entries) {
  const zip = new yazl.ZipFile();
  for (const { name, data } of entries) {
    zip.addBuffer(data, name, { mtime: ZIP_MTIME, mode: 0o100644, forceDosTimestamp: true, compressionLevel: 9 });
  }
  zip.end();
  const chunks = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function outputFile(result, suffix) {
  const file = result.outputFiles.find((output) => output.path.endsWith(suffix));
  if (!file) throw new Error(`esbuild produced no ${suffix}`);
  return Buffer.from(file.contents.buffer, file.contents.byteOffset, file.contents.byteLength);
}

/**
 * The console's page and assets: the browser code bundled on its own (DOM, no Node), with the CSS
 * it imports (its own and the chart library's) as one stylesheet. Relative names: the function
 * reads them beside its index.mjs.
 */
async function consoleAssets(root) {
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { console: 'console/main.ts' },
    outdir: path.join(root, BUILD_DIR, 'console-assets'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  return [
    { name: 'console/index.html', data: await readFile(path.join(root, 'console', 'index.html')) },
    { name: 'console/console.js', data: outputFile(result, 'console.js') },
    { name: 'console/console.css', data: outputFile(result, 'console.css') },
  ];
}

/** Files a function serves, zipped beside its code. */
const functionAssets = new Map([['console', consoleAssets]]);

async function bundleFunction(fn, root) {
  const outdir = path.join(root, BUILD_DIR, 'functions', fn.name);
  const artifact = path.join(root, fn.artifact);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: { index: fn.source },
    outdir,
    // What a request path rarely needs (a provider's adapter, the Responses translation, the KMS
    // client, a guardrail check's verifier) is imported where it is used, and lands in a chunk of
    // its own beside index.mjs: the cold start loads only what every request needs.
    splitting: true,
    chunkNames: 'chunk-[hash]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // GATEWAY_BUILD_READABLE=1 keeps names and layout, for CPU profiles (never for deployment).
    minify: !process.env.GATEWAY_BUILD_READABLE,
    treeShaking: true,
    mainFields: ['module', 'main'],
    // Lambda gives functions their credentials in the environment; the rest of the SDK's default
    // chain would only add weight (lib/store/lambda-credentials.ts says what and why).
    alias: { '@aws-sdk/credential-provider-node': './lib/store/lambda-credentials.ts' },
    banner: { js: CJS_SHIM },
    legalComments: 'none',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const files = result.outputFiles.map((output) => ({
    name: path.basename(output.path),
    data: Buffer.from(output.contents.buffer, output.contents.byteOffset, output.contents.byteLength),
  }));
  if (!files.some((file) => file.name === 'index.mjs')) throw new Error('esbuild produced no index.mjs');
  // Chunks first, so a reader that finds the new index.mjs finds every chunk it imports.
  files.sort((a, b) => Number(a.name === 'index.mjs') - Number(b.name === 'index.mjs'));
  for (const file of files) await writeAtomic(path.join(outdir, file.name), file.data);
  // Files the function reads at run time (the console's page and assets), beside its code.
  const assets = (await functionAssets.get(fn.name)?.(root)) ?? [];
  for (const asset of assets) await writeAtomic(path.join(outdir, asset.name), asset.data);
  await writeAtomic(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
  await removeStaleChunks(outdir, new Set(files.map((file) => file.name)));
  // Lambda runs index.mjs from the zip's root; the chunks it imports sit beside it.
  const zip = await zipBuffer([...files, ...assets]);
  await writeAtomic(artifact, zip);
  const entry = files.find((file) => file.name === 'index.mjs');
  return {
    name: fn.name,
    source: fn.source,
    bundleBytes: entry.data.length + eagerChunkBytes(result.metafile, outdir, root),
    totalBytes: files.reduce((sum, file) => sum + file.data.length, 0),
    zipBytes: zip.length,
  };
}

/**
 * The bytes of the chunks index.mjs imports statically (directly or through another chunk): what a
 * cold start loads along with it. Chunks reached only through `import()` load when first needed.
 */
function eagerChunkBytes(metafile, outdir, root) {
  const outputs = metafile.outputs;
  const entry = path.relative(root, path.join(outdir, 'index.mjs')).split(path.sep).join('/');
  const seen = new Set([entry]);
  const pending = [entry];
  let bytes = 0;
  while (pending.length > 0) {
    for (const imported of outputs[pending.pop()]?.imports ?? []) {
      if (imported.kind !== 'import-statement' || imported.external || seen.has(imported.path)) continue;
      seen.add(imported.path);
      pending.push(imported.path);
      bytes += outputs[imported.path]?.bytes ?? 0;
    }
  }
  return bytes;
}

/** Chunks of an earlier build that this one no longer has (their names are hashes of their contents). */
async function removeStaleChunks(outdir, keep) {
  for (const name of await readdir(outdir)) {
    if (/^chunk-[A-Z0-9]+\.mjs$/.test(name) && !keep.has(name)) await rm(path.join(outdir, name), { force: true });
  }
}

async function placeholderFunction(fn, root) {
  // The handler source is not written yet: leave no stale bundle behind, and give `serverless
  // package` an (empty) artifact so the stack can still be checked.
  await rm(path.join(root, BUILD_DIR, 'functions', fn.name), { recursive: true, force: true });
  const zip = await zipBuffer([]);
  await writeAtomic(path.join(root, fn.artifact), zip);
  return { name: fn.name, source: fn.source, bundleBytes: 0, zipBytes: zip.length, placeholder: true };
}

async function bundleLocal(entry, outName, root) {
  const outfile = path.join(root, BUILD_DIR, 'local', outName);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    banner: { js: CJS_SHIM },
    sourcemap: 'inline',
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const code = outputFile(result, outName);
  await writeAtomic(outfile, code);
  return { name: `local/${outName}`, source: entry, bundleBytes: code.length, zipBytes: 0 };
}

/**
 * The admin CLI, one self-contained file: it talks HTTP only, so it runs from any directory
 * without the gateway's dependencies installed next to it.
 * @param {{ root?: string }} [options]
 */
export async function buildCli({ root = ROOT } = {}) {
  const outName = 'gateway-admin.mjs';
  const outfile = path.join(root, BUILD_DIR, 'cli', outName);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['cli/main.ts'],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: `#!/usr/bin/env node\n${CJS_SHIM}` },
    write: false,
    logLevel: 'warning',
  });
  const code = outputFile(result, outName);
  await writeAtomic(outfile, code);
  return { name: `cli/${outName}`, source: 'cli/main.ts', bundleBytes: code.length, zipBytes: 0 };
}

function formatBytes(bytes) {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(2)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} B`;
}

function printTable(rows, log) {
  const lines = [['bundle', 'source', 'size', 'with chunks', 'zip']].concat(
    rows.map((row) => [
      row.name,
      row.source,
      row.placeholder ? 'MISSING' : formatBytes(row.bundleBytes),
      row.totalBytes ? formatBytes(row.totalBytes) : '-',
      row.zipBytes ? formatBytes(row.zipBytes) : '-',
    ]),
  );
  const widths = lines[0].map((_, column) => Math.max(...lines.map((line) => line[column].length)));
  for (const line of lines)
    log(
      line
        .map((cell, column) => cell.padEnd(widths[column]))
        .join('  ')
        .trimEnd(),
    );
}

/**
 * @param {{ local?: boolean, strict?: boolean, root?: string, quiet?: boolean }} [options]
 *   local: also bundle the local runtime; strict: fail when a function's source is missing instead
 *   of writing a placeholder artifact.
 */
export async function build({ local = false, strict = false, root = ROOT, quiet = false } = {}) {
  const log = quiet ? () => {} : (line) => console.log(line);
  const functions = await listFunctions(root);
  const missing = functions.filter((fn) => !existsSync(path.join(root, fn.source)));
  if (missing.length > 0) {
    const list = missing.map((fn) => `  ${fn.name}: ${fn.source}`).join('\n');
    if (strict) throw new Error(`build: handler sources missing for functions in serverless.yml:\n${list}`);
    console.warn(`\n!!! WARNING: handler sources missing for functions in serverless.yml — writing EMPTY placeholder artifacts:\n${list}\n`);
  }

  const rows = await Promise.all(functions.map((fn) => (missing.includes(fn) ? placeholderFunction(fn, root) : bundleFunction(fn, root))));

  if (local) {
    const entries = [
      ['lib/local/main.ts', 'main.mjs'],
      ['scripts/bootstrap.ts', 'bootstrap.mjs'],
      ['lib/local/triggers/log-worker.ts', 'log-worker.mjs'],
    ];
    for (const [entry, outName] of entries) {
      if (!existsSync(path.join(root, entry))) {
        console.warn(`!!! WARNING: ${entry} does not exist yet; .build/local/${outName} not built`);
        continue;
      }
      rows.push(await bundleLocal(entry, outName, root));
    }
  }

  if (existsSync(path.join(root, 'cli', 'main.ts'))) rows.push(await buildCli({ root }));

  printTable(rows, log);
  return { functions: rows.filter((row) => !row.name.startsWith('local/') && !row.name.startsWith('cli/')), missing: missing.map((fn) => fn.name) };
}
