import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BatchInputChecker, maxBatchLines } from '../../../lib/batches/batch-input';
import { fileLines } from '../../../lib/core/text-lines';

const line = (customId: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
    ...extra,
  });

function check(lines: string[], endpoint = '/v1/chat/completions') {
  const checker = new BatchInputChecker(endpoint);
  const requests = lines.map((text, index) => checker.check(text, index + 1)).filter(Boolean);
  return { requests, errors: checker.finish() };
}

describe('a batch input file', () => {
  it('numbers requests from 1, skipping blank lines, and keeps each body', () => {
    const { requests, errors } = check([line('a'), '', line('b')]);
    expect(errors).toEqual([]);
    expect(requests.map((request) => [request!.line, request!.custom_id])).toEqual([
      [1, 'a'],
      [2, 'b'],
    ]);
  });

  it('names the file line and the field of each error', () => {
    const { errors } = check([
      line('a'),
      '[1]',
      line(''),
      line('a'),
      line('e', { method: 'PUT' }),
      line('f', { url: '/v1/files' }),
      line('g', { body: 'text' }),
      line('h', { body: { model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true } }),
      line('i', { body: { messages: [{ role: 'user', content: 'x' }] } }),
    ]);
    expect(errors.map(({ line, code, param }) => [line, code, param])).toEqual([
      [2, 'invalid_request', null],
      [3, 'invalid_custom_id', 'custom_id'],
      [4, 'duplicate_custom_id', 'custom_id'],
      [5, 'invalid_method', 'method'],
      [6, 'invalid_url', 'url'],
      [7, 'invalid_body', 'body'],
      [8, 'invalid_body', 'body.stream'],
      [9, 'missing_required_parameter', 'body.model'],
    ]);
    expect(errors[2]!.message).toBe('Line 4: custom_id "a" is used on line 1 already; each must be unique in the file.');
  });

  it('without an endpoint, holds every line to the first one’s url', () => {
    const { errors } = check([line('a'), line('b', { url: '/v1/embeddings', body: { model: 'e', input: 'x' } })], undefined as unknown as string);
    expect(errors).toMatchObject([{ line: 2, code: 'mismatched_url' }]);
  });

  it('refuses an empty file and one with too many requests', () => {
    expect(check(['', '  ']).errors).toMatchObject([{ code: 'empty_file', line: null }]);
    const checker = new BatchInputChecker('/v1/chat/completions');
    const text = line('x');
    for (let index = 1; index <= maxBatchLines + 1; index++) checker.check(text.replace('"x"', `"x${index}"`), index);
    expect(checker.finish()).toMatchObject([{ code: 'too_many_requests', line: maxBatchLines + 1 }]);
  });

  it('splits a byte stream into lines wherever its pieces are cut, CRLF or LF, with a last line unterminated', async () => {
    const bytes = Buffer.from('one\r\ntwo é\nthree');
    const pieces = Array.from(bytes).map((byte) => Buffer.from([byte]));
    const lines: { text: string; line: number }[] = [];
    for await (const each of fileLines(Readable.from(pieces))) lines.push(each);
    expect(lines).toEqual([
      { text: 'one', line: 1 },
      { text: 'two é', line: 2 },
      { text: 'three', line: 3 },
    ]);
  });
});
