import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { env, gatewayFetch, waitForLogs } from '../support/gateway-client';
import { repoRoot } from '../support/repo-root';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const bin = path.join(repoRoot, 'bin', 'gateway-admin.mjs');

/** The CLI as a person runs it: a process of its own, the gateway and key from the environment. */
function cli(args: string[], options: { input?: string; env?: Record<string, string | undefined> } = {}): Promise<Run> {
  const { gatewayUrl, adminKey } = env();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: repoRoot,
      env: { ...process.env, GATEWAY_URL: gatewayUrl, GATEWAY_API_KEY: adminKey, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

async function json(args: string[], options?: Parameters<typeof cli>[1]): Promise<any> {
  const run = await cli([...args, '--json'], options);
  if (run.code !== 0) throw new Error(`gateway-admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/** Reads through the CLI until `done` holds: log records and rollups are stored a moment after the answer. */
async function until(args: string[], done: (answer: any) => boolean, timeoutMs = 20_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await json(args);
    if (done(answer) || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function chat(traceId: string, user: string): Promise<void> {
  const response = await gatewayFetch('/chat/completions', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-provider-key',
      'x-gateway-trace-id': traceId,
      'x-gateway-metadata': JSON.stringify({ _user: user }),
    },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello from the admin CLI test' }] }),
  });
  expect(response.status).toBe(200);
  await response.text();
}

// Each command is a process of its own: a test runs a dozen, which a busy machine may take a while to start.
describe('the admin CLI against the local gateway', { timeout: 90_000 }, () => {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'gateway-admin-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers --help for the program and its commands, with exit code 0', async () => {
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    for (const command of ['keys', 'workspaces', 'providers', 'configs', 'guardrails', 'prompts', 'policies', 'logs', 'analytics', 'bootstrap']) {
      expect(top.stdout).toContain(command);
    }
    expect((await cli(['help', 'keys'])).code).toBe(0);
    expect((await cli(['policies', 'usage-limits', 'create', '--help'])).stdout).toContain('--credit-limit');
    // A group without its subcommand is a usage mistake, its help on stderr.
    const bare = await cli(['keys']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('create');
    const bootstrap = await cli(['bootstrap', '--help']);
    expect(bootstrap.code).toBe(0);
    expect(bootstrap.stdout).toContain('GATEWAY_ADMIN_KEY');
    expect(bootstrap.stdout).toContain('--stage');
  });

  it('bootstrap checks the local gateway and the key, then keys list prints a table and JSON', async () => {
    const checked = await cli(['bootstrap']);
    expect(checked.code).toBe(0);
    expect(checked.stdout).toContain('is bootstrapped and accepts this key');

    const keyless = await cli(['bootstrap'], { env: { GATEWAY_API_KEY: undefined } });
    expect(keyless.code).toBe(0);
    expect(keyless.stdout).toContain('GATEWAY_ADMIN_KEY');

    const created = await json(['keys', 'create', '--name', `cli member ${run}`]);
    expect(created.key).toMatch(/^gwk_/);
    expect(created.role).toBe('member');

    const table = await cli(['keys', 'list', '--all']);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+ROLE\s+STATUS\s+HINT\s+WORKSPACE\s+CREATED_AT$/);
    const row = rows.find((line) => line.startsWith(created.id));
    expect(row).toMatch(new RegExp(`^${created.id}\\s+cli member ${run}\\s+member\\s+active\\s+`));
    // Aligned: every row's second column starts where the header's does.
    expect(row!.indexOf(`cli member ${run}`)).toBe(header.indexOf('NAME'));
    expect(table.stdout).not.toContain(created.key);

    const listed = await json(['keys', 'list', '--all']);
    expect(listed.object).toBe('list');
    expect(listed.data.map((key: { id: string }) => key.id)).toContain(created.id);

    const revoked = await cli(['keys', 'delete', created.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`Revoked ${created.id}`);
  });

  it('creates providers with the key from a file and from standard input, and refuses it as an argument', async () => {
    const keyFile = path.join(dir, 'openai.key');
    await writeFile(keyFile, 'sk-from-a-file-0123456789\n');
    const fromFile = await json([
      'providers',
      'create',
      '--slug',
      `cli-file-${run}`,
      '--provider',
      'openai',
      '--name',
      'From a file',
      '--api-key-file',
      keyFile,
    ]);
    expect(fromFile).toMatchObject({ object: 'provider', slug: `cli-file-${run}`, provider: 'openai', name: 'From a file' });
    expect(fromFile.credentials.api_key).toBeTruthy();
    expect(JSON.stringify(fromFile)).not.toContain('sk-from-a-file');

    const fromStdin = await json(['providers', 'create', '--slug', `cli-stdin-${run}`, '--provider', 'openai', '--api-key-stdin'], {
      input: 'sk-from-stdin-0123456789\n',
    });
    expect(fromStdin).toMatchObject({ slug: `cli-stdin-${run}`, name: `cli-stdin-${run}` });
    expect(fromStdin.credentials.api_key).toBeTruthy();

    // The stored key is the one sent: the fake upstream echoes the Authorization it got.
    const through = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-provider': `@cli-stdin-${run}` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(through.status).toBe(200);
    await through.text();

    const updated = await json(['providers', 'update', `cli-file-${run}`, '--name', 'Renamed']);
    expect(updated).toMatchObject({ slug: `cli-file-${run}`, provider: 'openai', name: 'Renamed' });
    expect(updated.credentials.api_key).toBeTruthy();

    const refused = await cli(['providers', 'create', '--slug', `cli-arg-${run}`, '--provider', 'openai', '--api-key', 'sk-on-the-command-line']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--api-key is refused');
    expect(refused.stderr).toContain('shell history');
    expect(refused.stderr).toContain('--api-key-file');
    const inline = await cli(['providers', 'create', '--body', '{"slug":"x","provider":"openai","api_key":"sk-inline"}']);
    expect(inline.code).toBe(2);
    expect(inline.stderr).toContain('--body takes only "-"');
    const listed = await json(['providers', 'list', '--all']);
    expect(listed.data.map((entry: { slug: string }) => entry.slug)).not.toContain(`cli-arg-${run}`);

    for (const slug of [`cli-file-${run}`, `cli-stdin-${run}`]) expect((await cli(['providers', 'delete', slug])).code).toBe(0);
  });

  it('creates, shows, lists, updates and deletes a config', async () => {
    const configFile = path.join(dir, 'config.json');
    await writeFile(configFile, JSON.stringify({ provider: 'openai', retry: { attempts: 2 } }));
    const created = await json(['configs', 'create', '--name', `cli config ${run}`, '--config-file', configFile]);
    expect(created).toMatchObject({ object: 'config', name: `cli config ${run}`, version: 1 });

    const shown = await json(['configs', 'get', created.id]);
    expect(shown.config).toMatchObject({ provider: 'openai', retry: { attempts: 2 } });
    const record = await cli(['configs', 'get', created.id]);
    expect(record.code).toBe(0);
    expect(record.stdout).toMatch(new RegExp(`^id\\s+${created.id}$`, 'm'));

    const table = await cli(['configs', 'list', '--all']);
    expect(table.stdout).toMatch(new RegExp(`^${created.id}\\s+cli config ${run}\\s+1\\s`, 'm'));

    const updated = await json(['configs', 'update', created.id, '--config-file', '-'], {
      input: JSON.stringify({ provider: 'openai', retry: { attempts: 3 } }),
    });
    expect(updated.version).toBe(2);

    const deleted = await cli(['configs', 'delete', created.id]);
    expect(deleted.code).toBe(0);
    const gone = await cli(['configs', 'get', created.id]);
    expect(gone.code).toBe(1);
  });

  it('exits 1 with the API’s message, status and code on stderr when the gateway refuses', async () => {
    const refused = await cli(['configs', 'get', 'cfg_doesnotexist']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^error: .+\(HTTP 404, code \S+/);

    const badKey = await cli(['keys', 'list'], { env: { GATEWAY_API_KEY: 'gwk_not_a_key_of_this_gateway_000000' } });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain('HTTP 401');
  });

  it('exits 2 on bad usage, and 3 with a clear message when the gateway cannot be reached', async () => {
    const missing = await cli(['keys', 'create']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--name');
    const unknownOption = await cli(['keys', 'list', '--bogus']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toContain("unknown option '--bogus'");
    const unknownCommand = await cli(['nonsense']);
    expect(unknownCommand.code).toBe(2);
    const badNumber = await cli(['keys', 'list', '--limit', 'many']);
    expect(badNumber.code).toBe(2);

    const down = await cli(['keys', 'list'], { env: { GATEWAY_URL: 'http://127.0.0.1:9/v1' } });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('Cannot reach the gateway at http://127.0.0.1:9/v1');
  });

  it('lists and tails logs after an inference request, and groups analytics', async () => {
    const user = `cli-user-${run}`;
    const tail = spawn(process.execPath, [bin, 'logs', 'tail', '--since', '1m', '--lines', '0', '--interval', '1', '--json'], {
      cwd: repoRoot,
      env: { ...process.env, GATEWAY_URL: env().gatewayUrl, GATEWAY_API_KEY: env().adminKey },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tailed = '';
    let notes = '';
    tail.stdout.setEncoding('utf8').on('data', (text: string) => (tailed += text));
    tail.stderr.setEncoding('utf8').on('data', (text: string) => (notes += text));
    try {
      // With --lines 0 a record stored before the tail's first poll is the past: send the request once it follows.
      const following = Date.now() + 20_000;
      while (!notes.includes('Following new log records') && Date.now() < following) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(notes).toContain('Following new log records every 1s');
      await chat(`cli-trace-${run}`, user);
      await waitForLogs(`cli-trace-${run}`);

      const listed = await until(['logs', 'list', '--trace-id', `cli-trace-${run}`], (answer) => answer.data.length > 0);
      expect(listed.data[0]).toMatchObject({ trace_id: `cli-trace-${run}`, model: 'gpt-4o-mini', status: 200 });
      const table = await cli(['logs', 'list', '--metadata', `_user=${user}`, '--since', '1h']);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(/^STARTED_AT\s+ID\s+TRACE\s+PROVIDER\s+MODEL\s+STATUS/);
      expect(table.stdout).toMatch(new RegExp(`cli-trace-${run}\\s+openai\\s+gpt-4o-mini\\s+200`));

      const deadline = Date.now() + 20_000;
      while (!tailed.includes(`cli-trace-${run}`) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      const lines = tailed
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.filter((record) => record.trace_id === `cli-trace-${run}`)).toHaveLength(1);
      // Its own polls are logged requests too, and never shown.
      expect(lines.filter((record) => String(record.trace_id).startsWith('gateway-admin-tail-'))).toEqual([]);
    } finally {
      tail.kill('SIGTERM');
    }

    const groups = await until(
      ['analytics', 'groups', 'model', '--user', user, '--columns', 'total_tokens,success_rate'],
      (answer) => answer.data[0]?.requests === 1,
    );
    expect(groups).toMatchObject({ object: 'list', group_by: 'model', columns: ['requests', 'total_tokens', 'success_rate'] });
    expect(groups.data[0]).toMatchObject({ model: 'gpt-4o-mini', requests: 1, success_rate: 1 });
    const table = await cli(['analytics', 'groups', 'model', '--user', user, '--columns', 'total_tokens']);
    expect(table.stdout).toMatch(/^MODEL\s+REQUESTS\s+TOTAL_TOKENS\ngpt-4o-mini\s+1\s+\d+\n$/);
  });

  it('a second workspace’s key sees none of the first workspace’s resources', async () => {
    const configFile = path.join(dir, 'first.json');
    await writeFile(configFile, JSON.stringify({ provider: 'openai' }));
    const first = await json(['configs', 'create', '--name', `first ${run}`, '--config-file', configFile]);

    const workspace = await json(['workspaces', 'create', '--name', `CLI research ${run}`]);
    const key = await json(['keys', 'create', '--name', 'research admin', '--role', 'admin', '--workspace', workspace.id]);
    const asSecond = { env: { GATEWAY_API_KEY: key.key } };

    const workspaces = await json(['workspaces', 'list'], asSecond);
    expect(workspaces.data.map((each: { id: string }) => each.id)).toEqual([workspace.id]);
    const configs = await json(['configs', 'list', '--all'], asSecond);
    expect(configs.data.map((each: { id: string }) => each.id)).not.toContain(first.id);
    const hidden = await cli(['configs', 'get', first.id], asSecond);
    expect(hidden.code).toBe(1);
    expect(hidden.stderr).toContain('HTTP 404');
    const deleteRefused = await cli(['configs', 'delete', first.id], asSecond);
    expect(deleteRefused.code).toBe(1);
    expect((await json(['configs', 'get', first.id])).id).toBe(first.id);

    const ownKeys = await json(['keys', 'list', '--all'], asSecond);
    expect(ownKeys.data.every((each: { workspace_id: string }) => each.workspace_id === workspace.id)).toBe(true);
    const ownerOnly = await cli(['workspaces', 'create', '--name', 'not allowed'], asSecond);
    expect(ownerOnly.code).toBe(1);
    expect(ownerOnly.stderr).toContain('HTTP 403');

    await cli(['configs', 'delete', first.id]);
    await cli(['keys', 'delete', key.id]);
    expect((await cli(['workspaces', 'delete', workspace.id])).code).toBe(0);
  });

  it('manages guardrails, prompts and both kinds of policy', async () => {
    const checks = path.join(dir, 'checks.json');
    await writeFile(checks, JSON.stringify([{ id: 'default.wordCount', parameters: { minWords: 1, maxWords: 50 } }]));
    const guardrail = await json(['guardrails', 'create', '--name', `short ${run}`, '--checks-file', checks]);
    expect(guardrail).toMatchObject({ object: 'guardrail', name: `short ${run}` });
    expect((await json(['guardrails', 'update', guardrail.id, '--name', `shorter ${run}`])).name).toBe(`shorter ${run}`);
    expect((await cli(['guardrails', 'delete', guardrail.id])).code).toBe(0);

    const prompt = await json(['prompts', 'create', '--name', `greeting ${run}`, '--template-file', '-', '--model', 'gpt-4o-mini'], {
      input: 'Hello {{name}}',
    });
    expect(prompt.id).toBeTruthy();
    const second = await json(['prompts', 'update', prompt.id, '--template-file', '-'], { input: 'Hi {{name}}' });
    expect(second.version).toBe(2);
    expect(second.model).toBe('gpt-4o-mini');
    const versions = await json(['prompts', 'versions', prompt.id]);
    expect(versions.data.length).toBe(2);
    expect((await cli(['prompts', 'publish', prompt.id, '2'])).code).toBe(0);
    expect((await json(['prompts', 'get', prompt.id])).string).toBe('Hi {{name}}');
    expect((await cli(['prompts', 'delete', prompt.id])).code).toBe(0);

    const rate = await json([
      'policies',
      'rate-limits',
      'create',
      '--name',
      `cli rate ${run}`,
      '--type',
      'requests',
      '--unit',
      'rpm',
      '--value',
      '1000',
      '--condition',
      `metadata.team=cli-${run}`,
      '--group-by',
      'metadata._user',
    ]);
    expect(rate.id).toBeTruthy();
    expect((await json(['policies', 'rate-limits', 'update', rate.id, '--value', '2000'])).value).toBe(2000);
    const rates = await cli(['policies', 'rate-limits', 'list', '--page-size', '100']);
    expect(rates.stdout).toMatch(new RegExp(`^${rate.id}\\s+cli rate ${run}\\s+requests\\s+rpm\\s+2000\\s+active`, 'm'));
    expect((await cli(['policies', 'rate-limits', 'delete', rate.id])).code).toBe(0);

    const budget = await json([
      'policies',
      'usage-limits',
      'create',
      '--name',
      `cli budget ${run}`,
      '--type',
      'cost',
      '--credit-limit',
      '25',
      '--periodic-reset',
      'monthly',
      '--condition',
      `metadata.team=cli-${run}`,
      '--group-by',
      'metadata._user',
    ]);
    expect(budget).toMatchObject({ type: 'cost', credit_limit: 25 });
    expect((await json(['policies', 'usage-limits', 'get', budget.id])).name).toBe(`cli budget ${run}`);
    expect((await json(['policies', 'usage-limits', 'delete', budget.id])).status).toBe('archived');
  });
});
