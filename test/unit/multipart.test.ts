import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MultipartError, multipartBoundary, parseMultipart } from '../../lib/wire/multipart';

const crlf = '\r\n';

function body(boundary: string, parts: Array<{ headers: string[]; data: Buffer | string }>, { preamble = '', close = true } = {}): Buffer {
  const chunks: Buffer[] = [Buffer.from(preamble ? `${preamble}${crlf}` : '')];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${boundary}${crlf}${part.headers.join(crlf)}${crlf}${crlf}`), Buffer.from(part.data), Buffer.from(crlf));
  }
  chunks.push(Buffer.from(close ? `--${boundary}--${crlf}` : ''));
  return Buffer.concat(chunks);
}

describe('multipartBoundary', () => {
  it('reads the boundary of multipart/form-data, quoted or not', () => {
    expect(multipartBoundary('multipart/form-data; boundary=abc123')).toBe('abc123');
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b;c"')).toBe('a b;c');
  });

  it('is undefined for other content types and refuses a multipart type without a boundary', () => {
    expect(multipartBoundary('application/json')).toBeUndefined();
    expect(multipartBoundary(undefined)).toBeUndefined();
    expect(() => multipartBoundary('multipart/form-data')).toThrow(MultipartError);
    expect(() => multipartBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`)).toThrow(/1 to 70/);
  });
});

describe('parseMultipart', () => {
  it('gives each field and file, binary bytes unchanged and as a view of the body', () => {
    const bytes = Buffer.concat([randomBytes(4096), Buffer.from('\r\n--boundar'), randomBytes(4096)]);
    const input = body('boundary', [
      { headers: ['Content-Disposition: form-data; name="purpose"'], data: 'batch' },
      { headers: ['Content-Disposition: form-data; name="file"; filename="in put.jsonl"', 'Content-Type: application/jsonl'], data: bytes },
    ]);
    const parts = parseMultipart(input, 'boundary');
    expect(parts.map(({ name, filename, contentType }) => ({ name, filename, contentType }))).toEqual([
      { name: 'purpose', filename: undefined, contentType: undefined },
      { name: 'file', filename: 'in put.jsonl', contentType: 'application/jsonl' },
    ]);
    expect(parts[0]!.data.toString()).toBe('batch');
    expect(parts[1]!.data.equals(bytes)).toBe(true);
    expect(parts[1]!.data.buffer).toBe(input.buffer);
  });

  it('skips a preamble, reads RFC 5987 file names and escaped quotes', () => {
    const input = body(
      'b',
      [
        { headers: [`Content-Disposition: form-data; name="file"; filename="fallback.txt"; filename*=UTF-8''na%C3%AFve.txt`], data: 'x' },
        { headers: ['content-disposition: form-data; name="note"; filename="a \\"quoted\\" name"'], data: '' },
      ],
      { preamble: 'ignored' },
    );
    const parts = parseMultipart(input, 'b');
    expect(parts.map((part) => part.filename)).toEqual(['naïve.txt', 'a "quoted" name']);
    expect(parts[1]!.data.length).toBe(0);
  });

  it('refuses malformed bodies with a message', () => {
    const part = { headers: ['Content-Disposition: form-data; name="a"'], data: 'x' };
    expect(() => parseMultipart(Buffer.from('no parts here'), 'b')).toThrow(/never appears/);
    expect(() => parseMultipart(body('b', [part], { close: false }), 'b')).toThrow(/closing boundary/);
    expect(() => parseMultipart(body('b', [{ headers: ['Content-Type: text/plain'], data: 'x' }]), 'b')).toThrow(/Content-Disposition/);
    expect(() => parseMultipart(body('b', [{ headers: ['Content-Disposition: form-data'], data: 'x' }]), 'b')).toThrow(/"name"/);
    expect(() => parseMultipart(body('b', [{ headers: ['Content-Disposition: attachment; name="a"'], data: 'x' }]), 'b')).toThrow(/form-data/);
  });

  it('bounds the parts and the headers of a part', () => {
    const part = { headers: ['Content-Disposition: form-data; name="a"'], data: 'x' };
    expect(parseMultipart(body('b', Array(4).fill(part)), 'b', { maxParts: 4, maxHeaderBytes: 100 })).toHaveLength(4);
    expect(() => parseMultipart(body('b', Array(5).fill(part)), 'b', { maxParts: 4, maxHeaderBytes: 100 })).toThrow(/more than 4 parts/);
    const long = { headers: [`Content-Disposition: form-data; name="${'a'.repeat(200)}"`], data: 'x' };
    expect(() => parseMultipart(body('b', [long]), 'b', { maxParts: 4, maxHeaderBytes: 100 })).toThrow(/within 100 bytes/);
  });

  it('stays linear on a body of near-boundaries', () => {
    const near = Buffer.from('\r\n--boundar'.repeat(300_000));
    const input = body('boundary', [{ headers: ['Content-Disposition: form-data; name="file"; filename="f"'], data: near }]);
    const started = performance.now();
    expect(parseMultipart(input, 'boundary')[0]!.data.length).toBe(near.length);
    expect(performance.now() - started).toBeLessThan(500);
  });
});
