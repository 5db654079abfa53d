import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../lib/core/errors';
import { consolePolicy } from '../../lib/control/console-route';
import { staticFiles } from '../../lib/http/static-files';

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'static-files-'));
  await writeFile(path.join(folder, 'page.html'), '<p>page</p>');
  await writeFile(path.join(folder, 'secret.txt'), 'not served');
});

afterAll(() => rm(folder, { recursive: true, force: true }));

describe('static files', () => {
  const answer = () => staticFiles(pathToFileURL(`${folder}/`), new Map([['page.html', 'text/html']]), { 'x-frame-options': 'DENY' });

  it('answers a listed name with its bytes, its type and the given headers', async () => {
    const response = await answer()('page.html');
    expect(response.status).toBe(200);
    expect(response.headers).toEqual({ 'x-frame-options': 'DENY', 'content-type': 'text/html' });
    expect(String(response.body)).toBe('<p>page</p>');
  });

  it('404s any other name, whether or not a file of that name is there', async () => {
    for (const name of ['secret.txt', '../page.html', 'page.html/', '', '__proto__']) {
      const error = await answer()(name).catch((caught) => caught);
      expect(error, name).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).status, name).toBe(404);
    }
  });
});

describe('the console’s policy', () => {
  it('allows nothing inline, nothing of another origin, and no framing', () => {
    expect(consolePolicy).toContain("default-src 'self'");
    expect(consolePolicy).toContain("connect-src 'self'");
    expect(consolePolicy).toContain("frame-ancestors 'none'");
    expect(consolePolicy).not.toMatch(/unsafe-|\*|https?:/);
  });
});
