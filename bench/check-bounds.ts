/**
 * The longest the event loop is held by one guardrail check on the worst input it accepts: each
 * check that takes a schema or a list runs, in-process, on the largest input shaped to cost the
 * most, while `perf_hooks.monitorEventLoopDelay` samples the loop. Reports the worst delay seen
 * and how each run ended (verdict, or the budget or limit that stopped it).
 *
 * Run: npm run bench:checks
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { seededUniform } from '../lib/core/seeded-random';
import { findCheck, maxScannedText, runCheck } from '../lib/guardrails';
import type { CheckInput } from '../lib/guardrails';
import { doublingSchema, manyObjects, nestedArrays, recursiveTwice } from '../test/support/pathological-checks';

interface Case {
  check: string;
  name: string;
  parameters: Record<string, unknown>;
  text: string;
  request?: Record<string, unknown>;
}

const random = seededUniform(20_261_127);
const coinFlips = Array.from({ length: maxScannedText }, () => (random() < 0.5 ? 'a' : 'b')).join('');

const cases: Case[] = [
  { check: 'default.jsonSchema', name: '$defs doubling 30 levels (refused when parsed)', parameters: { schema: doublingSchema(30) }, text: '1' },
  { check: 'default.jsonSchema', name: 'anyOf recursion over 60 nested arrays', parameters: { schema: recursiveTwice }, text: nestedArrays(60) },
  {
    check: 'default.jsonSchema',
    name: 'uniqueItems over 20,000 objects',
    parameters: { schema: { type: 'array', uniqueItems: true } },
    text: manyObjects(20_000),
  },
  {
    check: 'default.jsonSchema',
    name: 'uniqueItems over 1 MB of empty objects',
    parameters: { schema: { type: 'array', uniqueItems: true } },
    text: `[${Array.from({ length: maxScannedText / 3 - 1 }, () => '{}').join(',')}]`,
  },
  {
    check: 'default.jsonSchema',
    name: '1,000 string subschemas over a 1 MB string',
    parameters: { schema: { anyOf: Array.from({ length: 1_000 }, (_, index) => ({ minLength: 1, maxLength: index })) } },
    text: JSON.stringify('y'.repeat(maxScannedText - 10)),
  },
  {
    check: 'default.jsonSchema',
    name: 'items over 1 MB of objects',
    parameters: { schema: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } } },
    text: manyObjects(70_000),
  },
  {
    check: 'default.jsonSchema',
    name: '12,000 fenced candidates',
    parameters: { schema: { type: 'array', contains: { type: 'string' } } },
    text: Array.from({ length: 12_000 }, () => `\`\`\`json\n${JSON.stringify(Array.from({ length: 20 }, (_, index) => index))}\n\`\`\``).join('\n'),
  },
  {
    check: 'default.jsonKeys',
    name: '1,000 keys over 60,000 fenced objects',
    parameters: { keys: Array.from({ length: 1_000 }, (_, index) => `k${index}`), operator: 'all' },
    text: Array.from({ length: 60_000 }, () => '```\n{"z":1}\n```').join('\n'),
  },
  {
    check: 'default.contains',
    name: '1,000 near-miss words over 1 MB',
    parameters: { words: Array.from({ length: 1_000 }, (_, index) => `${'a'.repeat(90)}${index}`) },
    text: 'a'.repeat(maxScannedText),
  },
  { check: 'default.regexMatch', name: 'a new DFA state per character over 1 MB', parameters: { rule: '[ab]*a[ab]{300}c' }, text: coinFlips },
  { check: 'default.regexMatch', name: 'a match located at the end of 1 MB', parameters: { rule: '[ab]*a[ab]{300}$' }, text: coinFlips },
  { check: 'default.regexReplace', name: 'a new DFA state per character over 1 MB', parameters: { rule: '[ab]*a[ab]{300}' }, text: coinFlips },
  { check: 'default.pii', name: '1 MB of e-mail addresses', parameters: {}, text: 'a@b.cc '.repeat(maxScannedText / 7) },
  { check: 'default.pii', name: '1 MB of digit groups', parameters: {}, text: '12 34 '.repeat(maxScannedText / 6) },
  { check: 'default.promptInjection', name: '1 MB of "ignore" and spaces', parameters: {}, text: `ignore${' '.repeat(maxScannedText - 6)}` },
  { check: 'default.containsCode', name: '1 MB of fences', parameters: { format: 'Python' }, text: '```py\n'.repeat(maxScannedText / 6) },
  { check: 'default.sentenceCount', name: '1 MB of full stops', parameters: { maxSentences: 10 }, text: 'a. '.repeat(maxScannedText / 3) },
  {
    check: 'default.requestParametersCheck',
    name: '100,000 tools against 1,000 names',
    parameters: { tools: { allowedFunctionNames: Array.from({ length: 1_000 }, (_, index) => `f${index}`) } },
    text: 'x',
    request: { model: 'm', messages: [], tools: Array.from({ length: 100_000 }, (_, index) => ({ type: 'function', function: { name: `g${index}` } })) },
  },
];

function inputOf(item: Case): CheckInput {
  return {
    side: 'request',
    text: item.text,
    operation: 'chat',
    request: item.request ?? { model: 'm', messages: [{ role: 'user', content: item.text }] },
    metadata: {},
    headers: {},
  };
}

const histogram = monitorEventLoopDelay({ resolution: 1 });
const rows: string[][] = [];
for (const item of cases) {
  const check = findCheck(item.check)!;
  const input = inputOf(item);
  histogram.reset();
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const outcome = await new Promise<Awaited<ReturnType<typeof runCheck>>>((resolve) => setImmediate(() => resolve(runCheck(check, item.parameters, input))));
  await new Promise((resolve) => setTimeout(resolve, 20));
  histogram.disable();
  const worst = histogram.max / 1e6;
  const ended = outcome.error ? `error: ${outcome.error.slice(0, 90)}` : `verdict ${outcome.verdict}`;
  rows.push([item.check, item.name, worst.toFixed(1), ended]);
}

const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column].length), 10));
console.log(['check', 'input', 'loop ms', 'ended'].map((title, column) => title.padEnd(widths[column] ?? 0)).join('  '));
for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  '));
console.log(`\nworst event-loop delay: ${Math.max(...rows.map((row) => Number(row[2]))).toFixed(1)} ms`);
