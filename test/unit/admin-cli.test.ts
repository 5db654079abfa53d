import { describe, expect, it } from 'vitest';
import { apiBase } from '../../cli/client';
import { sinceToStart } from '../../cli/commands/filters';
import { UsageError } from '../../cli/errors';
import { cell, field, renderRecord, renderTable } from '../../cli/table';

describe('the admin CLI tables', () => {
  it('aligns columns to their widest cell, with no trailing spaces', () => {
    const rows = [
      { id: 'key_1', name: 'a much longer name', role: 'member' },
      { id: 'key_22', name: 'short', role: 'admin' },
    ];
    expect(renderTable(rows, [field('id'), field('name'), field('role')]).split('\n')).toEqual([
      'ID      NAME                ROLE',
      'key_1   a much longer name  member',
      'key_22  short               admin',
    ]);
  });

  it('keeps later tables as wide as earlier ones when given their widths', () => {
    const widths: number[] = [];
    renderTable([{ model: 'gpt-4o-mini' }], [field('model')], widths);
    expect(renderTable([{ model: 'x' }], [field('model')], widths)).toBe('MODEL\nx');
    expect(widths).toEqual(['gpt-4o-mini'.length]);
  });

  it('shows times, absent values, nested values and long text as a person reads them', () => {
    expect(cell(1764255571, 'created_at')).toBe('2025-11-27T14:59:31Z');
    expect(cell(1764255571, 'value')).toBe('1764255571');
    expect(cell(null)).toBe('-');
    expect(cell({ api_key: 'set' })).toBe('{"api_key":"set"}');
    expect(cell('x'.repeat(100))).toHaveLength(60);
    expect(cell('two\nlines')).toBe('two lines');
    expect(field('usage.total_tokens').value({ usage: { total_tokens: 12 } })).toBe(12);
  });

  it('prints one object whole, a field a line', () => {
    expect(renderRecord({ id: 'cfg_1', config: { provider: 'openai', note: 'y'.repeat(80) } })).toBe(
      `id      cfg_1\nconfig  {"provider":"openai","note":"${'y'.repeat(80)}"}`,
    );
  });
});

describe('the admin CLI arguments', () => {
  it('takes the gateway URL with or without /v1', () => {
    expect(apiBase('http://localhost:8787')).toBe('http://localhost:8787/v1');
    expect(apiBase('http://localhost:8787/v1/')).toBe('http://localhost:8787/v1');
    expect(apiBase('https://abc.execute-api.eu-west-1.amazonaws.com/prod')).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/prod/v1');
    expect(() => apiBase('localhost:8787')).toThrow(UsageError);
    expect(() => apiBase('not a url')).toThrow(UsageError);
  });

  it('reads --since as an age before now', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(sinceToStart('15m', now)).toBe(now / 1000 - 900);
    expect(sinceToStart('2d', now)).toBe(now / 1000 - 2 * 86400);
    expect(() => sinceToStart('yesterday', now)).toThrow(UsageError);
  });
});
