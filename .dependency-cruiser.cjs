/**
 * The layer order of lib/ (docs/architecture.md, "Import rules"), checked by dependency-cruiser:
 * `test/unit/layer-order.test.ts` runs it in every `npm test`, `npm run docs:graph` draws it.
 *
 * A folder of lib/ may import only folders of a lower rank; folders of one rank do not import each
 * other. Type-only imports count: a type is as much a dependency as a value when a folder moves.
 */

/** From the bottom up. */
const ranks = [
  ['core'],
  ['wire'],
  ['outbound'],
  ['store', 'pricing'],
  ['secrets', 'auth', 'providers'],
  ['guardrails', 'mcp'],
  ['config', 'observability', 'ratelimit'],
  ['routing', 'catalog', 'cache', 'budgets'],
  ['inference'],
  ['http'],
  ['prompts', 'files'],
  ['control', 'provider-jobs'],
  ['batches', 'fine-tuning', 'responses'],
  // Reads every route definition, whichever layer holds it.
  ['openapi'],
  ['local'],
];

const folders = ranks.flat();
const rankOf = new Map(ranks.flatMap((names, rank) => names.map((name) => [name, rank])));
const anyOf = (names) => `(${names.join('|')})`;

const layerOrder = folders.map((folder) => {
  const notBelow = folders.filter((other) => other !== folder && rankOf.get(other) >= rankOf.get(folder));
  return {
    name: `layer-order:${folder}`,
    comment: `lib/${folder} may import only folders ranked below it: ${folders.filter((other) => rankOf.get(other) < rankOf.get(folder)).join(', ') || 'none'}`,
    severity: 'error',
    from: { path: `^lib/${folder}/` },
    to: { path: notBelow.length > 0 ? `^lib/${anyOf(notBelow)}/` : '^$' },
  };
});

/** Directions named on their own, so a report says which boundary a change crossed. */
const forbiddenDirections = [
  ['inference', ['http']],
  ['cache', ['inference']],
  ['providers', ['http', 'inference', 'store', 'control', 'local']],
  ['config', ['http', 'routing']],
  ['store', ['cache', 'routing', 'inference']],
  ['routing', ['inference', 'http', 'control', 'providers']],
].map(([from, to]) => ({
  name: `no-${from}-to-${to.join('-')}`,
  severity: 'error',
  from: { path: `^lib/${from}/` },
  to: { path: `^lib/${anyOf(to)}/` },
}));

/**
 * The AWS SDK and its internals (`@smithy/*`) are imported by the store, the local runtime and the
 * envelope encryption, and by the three wrappers that sign or frame bytes with the SDK's own code.
 */
const sdkUsers = [
  '^lib/store/',
  '^lib/local/',
  '^lib/secrets/',
  '^lib/outbound/sigv4[.]ts$',
  '^lib/providers/bedrock/auth[.]ts$',
  '^lib/providers/bedrock/event-stream[.]ts$',
];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module reaches itself through its imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'unranked-folder',
      comment: `Every folder of lib/ has a rank in .dependency-cruiser.cjs (${folders.join(', ')}).`,
      severity: 'error',
      from: { path: '^(lib|functions)/' },
      to: { path: `^lib/(?!${anyOf(folders)}/)` },
    },
    {
      name: 'no-lib-to-functions',
      comment: 'Handlers sit on top of lib/; nothing in lib/ imports one.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: '^functions/' },
    },
    {
      name: 'cli-over-http-only',
      comment: 'The admin CLI (cli/) is a client of the control API: it imports nothing of the gateway, so it works against any deployed version.',
      severity: 'error',
      from: { path: '^cli/' },
      to: { path: '^(lib|functions|scripts)/' },
    },
    ...layerOrder,
    ...forbiddenDirections,
    {
      name: 'aws-sdk-where-needed',
      comment: `@aws-sdk/* and @smithy/* are imported only by ${sdkUsers.join(', ')}`,
      severity: 'error',
      from: { path: '^(lib|functions)/', pathNot: sdkUsers },
      to: { path: '(^|/)(@aws-sdk|@smithy)/' },
    },
    {
      name: 'lambda-at-the-edge',
      comment: 'Lambda types and middy stay at the Lambda edge: functions/, lib/http/lambda and the local runtime.',
      severity: 'error',
      from: { path: '^(lib|functions)/', pathNot: ['^functions/', '^lib/http/lambda/', '^lib/local/'] },
      to: { path: '(^|/)(aws-lambda|@types/aws-lambda|@middy/[^/]+)(/|$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
  },
};

// Read by the graph script, which draws the folders rank by rank.
Object.defineProperty(module.exports, 'ranks', { value: ranks, enumerable: false });
