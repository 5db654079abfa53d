import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { contextWindowOf, defaultContextWindows, mergeContextWindows, reloadContextWindows } from '../../../lib/pricing/context-windows';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  reloadContextWindows();
});

describe('contextWindowOf: the defaults', () => {
  it('knows the common models by their names', () => {
    expect(contextWindowOf('gpt-4o')).toBe(128_000);
    expect(contextWindowOf('gpt-4o-mini')).toBe(128_000);
    expect(contextWindowOf('gpt-4.1')).toBe(1_047_576);
    expect(contextWindowOf('gpt-4.1-nano')).toBe(1_047_576);
    expect(contextWindowOf('o3')).toBe(200_000);
    expect(contextWindowOf('o4-mini')).toBe(200_000);
    expect(contextWindowOf('gpt-3.5-turbo')).toBe(16_385);
    expect(contextWindowOf('claude-sonnet-4')).toBe(200_000);
    expect(contextWindowOf('gemini-2.5-pro')).toBe(1_048_576);
    expect(contextWindowOf('gemini-1.5-pro')).toBe(2_097_152);
    expect(contextWindowOf('mistral-large-2411')).toBe(128_000);
  });

  it('gives a dated snapshot or a tagged version the window of its model', () => {
    expect(contextWindowOf('gpt-4o-2024-08-06')).toBe(128_000);
    expect(contextWindowOf('gpt-4.1-mini-2025-04-14')).toBe(1_047_576);
    expect(contextWindowOf('o3-mini-2025-01-31')).toBe(200_000);
    expect(contextWindowOf('gpt-3.5-turbo-0125')).toBe(16_385);
    expect(contextWindowOf('claude-3-5-sonnet-20241022')).toBe(200_000);
    expect(contextWindowOf('claude-3-5-sonnet-latest')).toBe(200_000);
    expect(contextWindowOf('claude-opus-4-1-20250805')).toBe(200_000);
    expect(contextWindowOf('claude-sonnet-4-5-20250929')).toBe(200_000);
    expect(contextWindowOf('gemini-1.5-flash-002')).toBe(1_048_576);
  });

  it('takes the longest key, so a smaller sibling keeps its own window', () => {
    const windows = { 'gpt-x': 1000, 'gpt-x-mini': 500 };
    vi.stubEnv('GATEWAY_CONTEXT_WINDOWS', JSON.stringify(windows));
    expect(contextWindowOf('gpt-x-mini-2025-01-01')).toBe(500);
    expect(contextWindowOf('gpt-x-2025-01-01')).toBe(1000);
  });

  it('strips routing and Bedrock prefixes, and ignores case', () => {
    expect(contextWindowOf('openai/gpt-4o')).toBe(128_000);
    expect(contextWindowOf('@my-azure/gpt-4o-mini')).toBe(128_000);
    expect(contextWindowOf('models/gemini-2.0-flash')).toBe(1_048_576);
    expect(contextWindowOf('GPT-4o')).toBe(128_000);
    expect(contextWindowOf('anthropic.claude-3-haiku-20240307-v1:0')).toBe(200_000);
    expect(contextWindowOf('us.anthropic.claude-3-7-sonnet-20250219-v1:0')).toBe(200_000);
    expect(contextWindowOf('claude-3-5-sonnet-v2@20241022')).toBe(200_000);
    expect(contextWindowOf('claude-sonnet-4@20250514')).toBe(200_000);
    expect(contextWindowOf('arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-opus-20240229-v1:0')).toBe(200_000);
  });

  it('matches a family key whatever follows it', () => {
    expect(contextWindowOf('llama-3.1-8b-instant')).toBe(128_000);
    expect(contextWindowOf('meta-llama/Meta-Llama-3.1-70B-Instruct')).toBe(128_000);
    expect(contextWindowOf('meta.llama3-1-70b-instruct-v1:0')).toBe(128_000);
    expect(contextWindowOf('llama-3.3-70b-versatile')).toBe(128_000);
  });

  it('does not guess a model that only shares the beginning of a known name', () => {
    for (const model of [
      'o1-mini',
      'gpt-4o-audio-preview',
      'gpt-3.5-turbo-instruct',
      'claude-sonnet-4-6',
      'gemini-2.5-flash-image',
      'mistral-large-latest',
      'gpt-4',
      'llama3.1:8b',
      '',
      '   ',
      'constructor',
      'toString',
    ]) {
      expect(contextWindowOf(model), model).toBeUndefined();
    }
  });

  it('keeps every default a positive whole number under a lower-case name', () => {
    for (const [model, tokens] of Object.entries(defaultContextWindows)) {
      expect(model).toBe(model.toLowerCase());
      expect(Number.isSafeInteger(tokens) && tokens > 0, model).toBe(true);
    }
  });
});

describe('contextWindowOf: an operator’s entries', () => {
  it('lays GATEWAY_CONTEXT_WINDOWS over the defaults: new models, changed windows, removed ones', () => {
    vi.stubEnv(
      'GATEWAY_CONTEXT_WINDOWS',
      JSON.stringify({ 'My-Finetune': 32_768, 'gpt-4o': 64_000, 'claude-3-opus': null, 'qwen2.5-*': 32_768, '@slow/gpt-4o-mini': 8_000 }),
    );
    expect(contextWindowOf('my-finetune')).toBe(32_768);
    expect(contextWindowOf('gpt-4o')).toBe(64_000);
    expect(contextWindowOf('gpt-4o-2024-08-06')).toBe(64_000);
    expect(contextWindowOf('claude-3-opus-20240229')).toBeUndefined();
    expect(contextWindowOf('qwen2.5-72b-instruct')).toBe(32_768);
    expect(contextWindowOf('@slow/gpt-4o-mini')).toBe(8_000);
    expect(contextWindowOf('@fast/gpt-4o-mini')).toBe(128_000);
    expect(contextWindowOf('gpt-4.1')).toBe(1_047_576);
  });

  it('reads the table once, until it is reloaded', () => {
    expect(contextWindowOf('my-model')).toBeUndefined();
    vi.stubEnv('GATEWAY_CONTEXT_WINDOWS', JSON.stringify({ 'my-model': 1000 }));
    expect(contextWindowOf('my-model')).toBeUndefined();
    reloadContextWindows();
    expect(contextWindowOf('my-model')).toBe(1000);
  });

  it('reads GATEWAY_CONTEXT_WINDOWS_FILE after GATEWAY_CONTEXT_WINDOWS, and reports a file it cannot read', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'context-windows-'));
    try {
      const file = path.join(dir, 'windows.json');
      writeFileSync(file, JSON.stringify({ 'my-model': 2000, 'other-model': 3000 }));
      vi.stubEnv('GATEWAY_CONTEXT_WINDOWS', JSON.stringify({ 'my-model': 1000 }));
      vi.stubEnv('GATEWAY_CONTEXT_WINDOWS_FILE', file);
      expect(contextWindowOf('my-model')).toBe(2000);
      expect(contextWindowOf('other-model')).toBe(3000);

      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      vi.stubEnv('GATEWAY_CONTEXT_WINDOWS_FILE', path.join(dir, 'missing.json'));
      reloadContextWindows();
      expect(contextWindowOf('my-model')).toBe(1000);
      expect(errors).toHaveBeenCalledOnce();
      expect(String(errors.mock.calls[0][0])).toMatch(/^GATEWAY_CONTEXT_WINDOWS_FILE could not be read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports and leaves out what is not a window, and keeps the rest', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const merged = mergeContextWindows(
      defaultContextWindows,
      { negative: -1, fraction: 1.5, text: '4096', zero: 0, object: { tokens: 4096 }, '': 4096, good: 4096 },
      'test',
    );
    expect(merged.good).toBe(4096);
    for (const model of ['negative', 'fraction', 'text', 'zero', 'object', '']) expect(Object.hasOwn(merged, model), model).toBe(false);
    expect(errors).toHaveBeenCalledTimes(6);
    expect(merged['gpt-4o']).toBe(128_000);
  });

  it('reports a value that is not an object, or not JSON, and keeps the defaults', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    expect(mergeContextWindows(defaultContextWindows, [1, 2], 'test')).toEqual(defaultContextWindows);
    vi.stubEnv('GATEWAY_CONTEXT_WINDOWS', '{not json');
    expect(contextWindowOf('gpt-4o')).toBe(128_000);
    expect(errors).toHaveBeenCalledTimes(2);
    expect(String(errors.mock.calls[1][0])).toBe('GATEWAY_CONTEXT_WINDOWS is not JSON; its context windows are not applied.');
  });
});
