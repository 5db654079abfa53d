// npm run docs:graph: writes docs/architecture-graph.md, the folder-level imports of lib/ and
// functions/ as a mermaid flowchart, from the same cruise and config the layer-order test uses.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const config = createRequire(import.meta.url)(path.join(repoRoot, '.dependency-cruiser.cjs'));
const { tsConfig, ...options } = config.options;

const { output } = await cruise(['lib', 'functions'], { ...options, baseDir: repoRoot }, undefined, {
  tsConfig: extractTSConfig(path.join(repoRoot, tsConfig.fileName)),
});

const folderOf = (file) => /^lib\/[^/]+/.exec(file)?.[0] ?? (file.startsWith('functions/') ? 'functions' : undefined);
const edges = new Map();
for (const module of output.modules) {
  const from = folderOf(module.source);
  for (const { resolved } of module.dependencies) {
    const to = folderOf(resolved);
    if (from && to && from !== to) edges.set(`${from} --> ${to}`, (edges.get(`${from} --> ${to}`) ?? 0) + 1);
  }
}

// Top rank first, so the chart reads downwards the way imports point.
const layers = [...config.ranks.map((names) => names.map((name) => `lib/${name}`)), ['functions']];
const top = [...layers].reverse();
const id = (folder) => folder.replace(/[^a-z]/g, '_');
const lines = [
  'flowchart TD',
  ...top.flatMap((names, index) => [
    `  subgraph rank${top.length - 1 - index}[" "]`,
    '    direction LR',
    ...names.map((name) => `    ${id(name)}["${name}"]`),
    '  end',
  ]),
  ...[...edges.keys()].sort().map((edge) => `  ${edge.split(' --> ').map(id).join(' --> ')}`),
];

const text = `# Folder imports of lib/ and functions/

Written by \`npm run docs:graph\` (scripts/architecture-graph.mjs) from \`.dependency-cruiser.cjs\`;
do not edit by hand. Each box is a folder, each row a rank of the layer order (top rank first); an
arrow is at least one import, type-only ones included, and always points to a lower rank.
\`test/unit/layer-order.test.ts\` fails on any import that would point elsewhere.

\`\`\`mermaid
${lines.join('\n')}
\`\`\`

| Rank | Folders |
|---|---|
${top.map((names, index) => `| ${top.length - 1 - index} | ${names.map((name) => `\`${name}\``).join(', ')} |`).join('\n')}
`;

writeFileSync(path.join(repoRoot, 'docs', 'architecture-graph.md'), text);
console.log(`docs/architecture-graph.md: ${edges.size} folder imports`);
