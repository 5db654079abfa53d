/**
 * The guides' shell examples, run as written: every ```sh and ```bash block of README.md and
 * docs/*.md goes to bash against a gateway started as `npm start` starts it, with the variables the
 * guides tell readers to set (GATEWAY, GATEWAY_KEY, OPENAI_API_KEY). Every provider's base URL points
 * at a fake upstream, so the examples' provider calls stay on this machine.
 *
 * Two HTML comments before a block steer it (docs/development.md explains them to writers):
 *   <!-- expect: <text> -->       the output must contain the text (one comment per text);
 *   <!-- not run: <reason> -->    the block is listed as skipped, with its reason.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAICompatibleProviders } from '../../lib/providers/openai-compatible/providers';
import { fakeEmbedding, fakeEmbeddingDims, startFakeUpstream, type FakeStep, type FakeUpstream } from '../support/fake-upstream';
import { repoRoot } from '../support/repo-root';
import { spawnGateway, type SpawnedGateway } from '../support/spawn-gateway';

interface Example {
  page: string;
  /** 1-based line of the opening fence, for the test's name. */
  line: number;
  code: string;
  expects: string[];
  notRun?: string;
}

/** The shell blocks of one page, with the comments that stand right before each. */
function shellExamples(page: string, text: string): Example[] {
  const lines = text.split('\n');
  const examples: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\w*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line));
    if (end < 0) throw new Error(`${page}:${i + 1}: a code block that never closes`);
    if (fence[1] === 'sh' || fence[1] === 'bash') {
      const example: Example = { page, line: i + 1, code: lines.slice(i + 1, end).join('\n'), expects: [] };
      for (let j = i - 1; j >= 0 && lines[j].startsWith('<!--'); j--) {
        const comment = /^<!--\s*(expect|not run):\s*(.*?)\s*-->$/.exec(lines[j]);
        if (!comment) throw new Error(`${page}:${j + 1}: a comment before a shell block that is neither "expect:" nor "not run:": ${lines[j]}`);
        if (comment[1] === 'expect') example.expects.unshift(comment[2]);
        else example.notRun = comment[2];
      }
      examples.push(example);
    }
    i = end;
  }
  return examples;
}

const docsDir = path.join(repoRoot, 'docs');
const pageNames = ['README.md', ...(await readdir(docsDir)).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];
const pages = await Promise.all(pageNames.map(async (page) => ({ page, examples: shellExamples(page, await readFile(path.join(repoRoot, page), 'utf8')) })));

const bootKey = 'gwk_guides_owner_key_of_the_first_start_0001';
const providerKey = 'sk-guides-provider-key';

/**
 * Embeddings that know one topic: any text about France gets (nearly) one vector, so the cache
 * guide's two ways of asking for the capital of France are a semantic hit as they would be with a
 * real model; every other text keeps the fake's own vector.
 */
const topicEmbeddings: FakeStep = {
  handle: (_request, response, recorded) => {
    const body = recorded.json as { model: string; input: string | string[]; dimensions?: number };
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    const dims = body.dimensions ?? fakeEmbeddingDims(body.model);
    const vector = (text: string) => {
      if (!/france/i.test(text)) return Array.from(fakeEmbedding(text, dims));
      return Array.from({ length: dims }, (_, i) => (i === 0 ? 1 : i === 1 ? text.length / 1000 : 0));
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        object: 'list',
        model: body.model,
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: vector(text) })),
        usage: { prompt_tokens: 8, total_tokens: 8 },
      }),
    );
  },
};

let upstream: FakeUpstream;
let gateway: SpawnedGateway;
let dataDir: string;
let workDir: string;

beforeAll(async () => {
  // A gateway of its own rather than the shared one: the examples change workspace-wide settings
  // (the semantic cache's embedding model, rate limits, budgets, owner keys) that the other files'
  // tests would see, and a fresh organisation is what a reader's first `npm start` gives.
  upstream = await startFakeUpstream({ record: false });
  upstream.script(
    '/openai/v1/embeddings',
    Array.from({ length: 50 }, () => topicEmbeddings),
  );
  dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-guides-'));
  workDir = await mkdtemp(path.join(tmpdir(), 'gateway-guides-cwd-'));
  const baseUrls = Object.fromEntries(openAICompatibleProviders.map((provider) => [provider.name, `${upstream.url}/${provider.name}/v1`]));
  gateway = await spawnGateway({
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: bootKey,
    GATEWAY_DYNAMODB_ENDPOINT: '',
    GATEWAY_SQS_ENDPOINT: '',
    GATEWAY_S3_ENDPOINT: '',
    GATEWAY_PROVIDER_BASE_URLS: JSON.stringify(baseUrls),
    GATEWAY_LOG_FLUSH_MS: '20',
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(workDir, { recursive: true, force: true });
});

async function asOwner(route: string, body: unknown, key = bootKey): Promise<any> {
  const response = await fetch(`${gateway.url}${route}`, {
    method: 'POST',
    headers: { 'x-gateway-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (response.status !== 200) throw new Error(`POST ${route} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** Runs a block as a reader's shell would, stopping at the first command that fails. */
function runBash(code: string, env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-eo', 'pipefail', '-c', code], {
      cwd: workDir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? workDir, LANG: 'C.UTF-8', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** The codes of the gateway errors an output holds (`{"error":{…,"code":"…"}}`). */
function errorCodes(output: string): string[] {
  return [...output.matchAll(/\{"error":\{.*?"code":("[^"]*"|null)/g)].map((match) => match[1]);
}

it('find the tools the examples use', async () => {
  for (const tool of ['curl', 'jq']) {
    const { status } = await runBash(`command -v ${tool}`, {});
    expect(status, `the guides' examples need ${tool} (.ci/run installs it)`).toBe(0);
  }
});

it('give a reason for every block they do not run', () => {
  for (const { page, examples } of pages) {
    for (const example of examples.filter((e) => e.notRun !== undefined)) expect(example.notRun, `${page}:${example.line}`).not.toBe('');
  }
  // A parser that stopped finding blocks would pass every page: the guides hold more than 20 runnable ones.
  const runnable = pages.flatMap(({ examples }) => examples.filter((example) => example.notRun === undefined));
  expect(runnable.length).toBeGreaterThan(20);
});

for (const { page, examples } of pages.filter(({ examples }) => examples.length > 0)) {
  describe(page, () => {
    // Each page in a workspace of its own, with an owner key of it: the pages' catalog entries,
    // policies and cached answers never meet, and each runs as on a fresh gateway.
    let env: Record<string, string>;
    beforeAll(async () => {
      const workspace = await asOwner('/workspaces', { name: `Guide ${page}` });
      const { key } = await asOwner('/api-keys', { name: `guide ${page}`, role: 'owner', workspace_id: workspace.id });
      env = { GATEWAY: gateway.url, GATEWAY_KEY: key, OPENAI_API_KEY: providerKey };
    });

    for (const example of examples) {
      const name = `${page}:${example.line}`;
      if (example.notRun !== undefined) {
        it.skip(`${name} (not run: ${example.notRun})`, () => {});
        continue;
      }
      it(name, async () => {
        const { status, stdout, stderr } = await runBash(example.code, env);
        const output = `${stdout}${stderr}`;
        expect(status, `${name} exited ${status}\n--- output\n${output}`).toBe(0);
        for (const text of example.expects) expect(stdout, `${name}: the output lacks ${JSON.stringify(text)}\n--- output\n${output}`).toContain(text);
        const unexpected = errorCodes(stdout).filter((code) => !example.expects.some((text) => text.includes(`"code":${code}`)));
        expect(unexpected, `${name}: the gateway answered errors the page does not show\n--- output\n${output}`).toEqual([]);
      }, 60_000);
    }
  });
}
