/**
 * The console in a real browser: Debian's Chromium, driven by playwright-core, against the shared
 * gateway. Signs in with the admin key, finds a request made just before in the recent requests,
 * opens its trace, and sees the charts drawn; checks the page's headers, that the key is kept in
 * the tab only, and that the page asks nothing of another origin. Writes screenshots to
 * .build/console/ (the trace view as console.png, the charts as charts.png).
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { env, gatewayFetch, waitForLogs } from '../support/gateway-client';
import { repoRoot } from '../support/repo-root';

const chromiumPath = '/usr/bin/chromium';
const hasChromium = existsSync(chromiumPath);
if (!hasChromium) console.log(`console browser test skipped: ${chromiumPath} is missing (apt-get install chromium)`);

const screenshots = path.join(repoRoot, '.build', 'console');

const wordLimit = { id: 'short-questions', deny: true, checks: [{ id: 'default.wordCount', parameters: { maxWords: 300 } }] };

describe.skipIf(!hasChromium)('the console in a browser', () => {
  const traceId = `console-${randomUUID()}`;
  let consoleUrl: string;
  let profile: string;
  let context: BrowserContext;
  let page: Page;
  const otherOrigins: string[] = [];
  const violations: string[] = [];

  beforeAll(async () => {
    const { gatewayUrl } = env();
    consoleUrl = `${gatewayUrl.replace(/\/v1\/?$/, '')}/console`;
    // Two requests of one trace, the second a child span of the first: a tree of two levels.
    for (const [span, parent] of [
      ['plan', undefined],
      ['answer', 'plan'],
    ]) {
      const response = await gatewayFetch('/chat/completions', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-provider': 'openai',
          authorization: 'Bearer sk-provider-key',
          'x-gateway-trace-id': traceId,
          'x-gateway-span-id': span!,
          'x-gateway-span-name': `${span} step`,
          // The child runs a hook, for the trace's hook results.
          ...(parent ? { 'x-gateway-parent-span-id': parent, 'x-gateway-config': JSON.stringify({ before_request_hooks: [wordLimit] }) } : {}),
        },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `The ${span} step` }] }),
      });
      expect(response.status).toBe(200);
    }
    await waitForLogs(traceId, { count: 2 });

    profile = await mkdtemp(path.join(tmpdir(), 'console-browser-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    // Offline by construction: anything asked of another origin is refused, and noted.
    const origin = new URL(consoleUrl).origin;
    await context.route('**/*', (route) => {
      if (new URL(route.request().url()).origin === origin) return route.continue();
      otherOrigins.push(route.request().url());
      return route.abort();
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    if (profile) await rm(profile, { recursive: true, force: true });
  });

  it('is served without a key, with a policy that allows nothing inline and nothing of another origin', async () => {
    const response = await fetch(consoleUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('unsafe-eval');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);

    for (const [file, type] of [
      ['console.js', /^text\/javascript/],
      ['console.css', /^text\/css/],
    ] as const) {
      const asset = await fetch(`${consoleUrl}/${file}`);
      expect(asset.status, file).toBe(200);
      expect(asset.headers.get('content-type'), file).toMatch(type);
      expect(asset.headers.get('content-security-policy'), file).toBe(policy);
    }
    const slash = await fetch(`${consoleUrl}/`, { redirect: 'manual' });
    expect([slash.status, new URL(slash.headers.get('location')!, `${consoleUrl}/`).href]).toEqual([308, consoleUrl]);
    expect((await fetch(`${consoleUrl}/..%2Fserverless.yml`)).status).toBe(404);
    expect((await fetch(`${consoleUrl}/index.mjs`)).status).toBe(404);
  });

  it('signs in, lists the request, opens its trace, and draws the charts', async () => {
    const { adminKey } = env();
    await page.goto(consoleUrl);
    // A key the gateway refuses is not kept, and the form says why.
    await page.fill('input[name="key"]', 'gwk_not_a_key_of_this_gateway');
    await page.click('form.sign-in button[type="submit"]');
    await page.getByText('Invalid x-gateway-api-key').waitFor();
    expect(await page.evaluate<string>('JSON.stringify({ ...sessionStorage })')).toBe('{}');
    await page.fill('input[name="key"]', adminKey);
    await page.click('form.sign-in button[type="submit"]');

    // The recent requests (the trace's are the newest), then only the trace's.
    const rows = page.locator(`tr[data-trace-id="${traceId}"]`);
    await rows.first().waitFor();
    await page.fill('input[name="trace_id"]', traceId);
    await page.click('form.filters button[type="submit"]');
    await expect.poll(() => page.locator('table.requests tbody tr').count()).toBe(2);
    expect(await rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain('gpt-4o-mini');
    // The filters combine: no 5xx in the trace, both requests of the provider and the model.
    await page.fill('input[name="status_code"]', '5xx');
    await page.click('form.filters button[type="submit"]');
    await page.getByText('No requests match.').waitFor();
    await page.fill('input[name="status_code"]', '');
    await page.fill('input[name="provider"]', 'openai');
    await page.fill('input[name="model"]', 'gpt-4o-mini');
    await page.click('form.filters button[type="submit"]');
    await expect.poll(() => rows.count()).toBe(2);

    await rows.first().click();
    await page.waitForSelector('#trace-id');
    expect(await page.textContent('#trace-id')).toBe(traceId);
    // The child span under its parent, each request with its attempt at the provider.
    const tree = page.locator('.spans > ul.span-tree > li');
    expect(await tree.count()).toBe(1);
    expect(await tree.locator('> button .span-name').textContent()).toBe('plan step');
    expect(await tree.locator('> ul > li > button.request .span-name').textContent()).toBe('answer step');
    expect(await page.locator('button.span.attempt').count()).toBe(2);
    const detail = page.locator('.span-detail');
    expect(await detail.textContent()).toContain('openai');
    expect(await detail.locator('table.attempts tbody tr').count()).toBe(1);
    expect(await detail.textContent()).toContain('No hooks ran.');
    await tree.locator('> ul > li > button.request').click();
    const hook = detail.locator('ul.hooks > li');
    await hook.waitFor();
    expect(await hook.textContent()).toContain('passed before: short-questions');
    expect(await hook.textContent()).toContain('default.wordCount: passed');
    await mkdir(screenshots, { recursive: true });
    const traceShot = path.join(screenshots, 'console.png');
    await page.screenshot({ path: traceShot, fullPage: true });
    console.log(`console screenshot: ${path.relative(repoRoot, traceShot)}`);

    await page.click('header nav a[href="#/charts"]');
    const requestsChart = page.locator('.chart[data-metric="requests"]');
    await requestsChart.waitFor();
    expect(Number(await requestsChart.getAttribute('data-nonzero'))).toBeGreaterThan(0);
    expect(Number(await page.getAttribute('.chart[data-metric="total_tokens"]', 'data-nonzero'))).toBeGreaterThan(0);
    expect(await page.locator('.chart canvas').count()).toBe(8);
    // The requests chart's canvas has drawn pixels, not only its frame. (The function runs in the
    // page; the test's own types know no DOM.)
    const drawn = await requestsChart.locator('canvas').evaluate((canvas: any) => {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let painted = 0;
      for (let index = 3; index < data.length; index += 4) if (data[index] > 0) painted++;
      return painted;
    });
    expect(drawn).toBeGreaterThan(100);
    const chartsShot = path.join(screenshots, 'charts.png');
    await page.screenshot({ path: chartsShot, fullPage: true });
    console.log(`console screenshot: ${path.relative(repoRoot, chartsShot)}`);
  });

  it('reads the catalog and the saved objects, a saved config in detail without its key', async () => {
    const secret = `sk-console-${randomUUID()}`;
    const created = await gatewayFetch('/configs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'console config', config: { provider: 'openai', api_key: secret } }),
    });
    expect(created.status).toBe(200);
    const { id } = await created.json();

    for (const kind of ['providers', 'configs', 'prompts', 'guardrails', 'rate-limits', 'usage-limits']) {
      await page.click(`header nav a[href="#/catalog/${kind}"]`);
      await page.waitForSelector('.content table.resources, .content p.muted:not(:empty)');
      expect(await page.locator('.content p.error').count(), kind).toBe(0);
    }
    // Opened by its address: other tests' configs may push it off the list's first page.
    await page.evaluate(`location.hash = ${JSON.stringify(`#/catalog/configs/${id}`)}`);
    const detail = page.locator('.content pre.json');
    await detail.waitFor();
    expect(await detail.textContent()).toContain('console config');
    expect(await page.content()).not.toContain(secret);
  });

  it('keeps the key in the tab only, and asks nothing of another origin', async () => {
    const { adminKey } = env();
    expect(await page.evaluate<string>('JSON.stringify({ ...localStorage })')).not.toContain(adminKey);
    expect(await page.evaluate<string>('document.cookie')).toBe('');
    expect(JSON.stringify(await context.cookies())).not.toContain(adminKey);
    expect(page.url()).not.toContain(adminKey);
    expect(await page.evaluate<string[]>('Object.values({ ...sessionStorage })')).toContain(adminKey);
    expect(otherOrigins).toEqual([]);
    expect(violations).toEqual([]);

    await page.click('header button.secondary');
    await page.waitForSelector('form.sign-in');
    expect(await page.evaluate<string>('JSON.stringify({ ...sessionStorage })')).not.toContain(adminKey);
  });
});
