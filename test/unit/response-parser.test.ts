import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededUniform } from '../../lib/core/seeded-random';
import { HttpParseError, ResponseParser, type ResponseHead } from '../../lib/outbound/response-parser';

// ---------------------------------------------------------------------------------------------
// Harness: feed a response whole, byte by byte, cut in two at every position (small inputs) and in
// seeded random pieces; every way of cutting must give the same outcome.
// ---------------------------------------------------------------------------------------------

type ParserOptions = ConstructorParameters<typeof ResponseParser>[1];

function randomPieces(data: Buffer, seed: number): Buffer[] {
  const random = seededUniform(seed);
  const pieces: Buffer[] = [];
  let at = 0;
  while (at < data.length) {
    // Mostly small pieces (to land on every boundary), sometimes bigger ones, sometimes empty ones.
    const roll = random();
    const max = roll < 0.6 ? 7 : roll < 0.9 ? 64 : 4096;
    const size = random() < 0.05 ? 0 : 1 + Math.floor(random() * max);
    pieces.push(data.subarray(at, Math.min(data.length, at + size)));
    at += size;
  }
  return pieces;
}

const seeds = [1, 2, 3, 7, 42, 99, 1234, 4242, 65537, 2024, 31337, 8675309];

interface Split {
  name: string;
  pieces: Buffer[];
}

function splits(data: Buffer, { exhaustive = data.length <= 2048, bytewise = data.length <= 300_000, seedCount = seeds.length } = {}): Split[] {
  const result: Split[] = [{ name: 'whole', pieces: [data] }];
  if (bytewise) result.push({ name: 'byte by byte', pieces: [...data].map((byte) => Buffer.from([byte])) });
  if (exhaustive) for (let cut = 1; cut < data.length; cut++) result.push({ name: `cut at ${cut}`, pieces: [data.subarray(0, cut), data.subarray(cut)] });
  for (const seed of seeds.slice(0, seedCount)) result.push({ name: `random pieces, seed ${seed}`, pieces: randomPieces(data, seed) });
  return result;
}

interface Outcome {
  heads: ResponseHead[];
  body: Buffer;
  ends: number;
  /** Event names with consecutive `body` events collapsed. */
  order: string;
  error?: unknown;
  complete: boolean;
  reusable: boolean;
  parser: ResponseParser;
}

function run(pieces: Buffer[], options?: ParserOptions, { finish = false } = {}): Outcome {
  const heads: ResponseHead[] = [];
  const bodies: Buffer[] = [];
  const order: string[] = [];
  let ends = 0;
  const note = (name: string) => {
    if (order.at(-1) !== name || name !== 'body') order.push(name);
  };
  const parser = new ResponseParser(
    {
      head(head) {
        heads.push(head);
        note('head');
      },
      body(chunk) {
        // Copy: the parser may hand out views of buffers it (or the caller) reuses.
        bodies.push(Buffer.from(chunk));
        note('body');
      },
      end() {
        ends++;
        note('end');
      },
    },
    options,
  );
  let error: unknown;
  try {
    for (const piece of pieces) parser.feed(piece);
    if (finish) parser.finish();
  } catch (caught) {
    error = caught;
  }
  return { heads, body: Buffer.concat(bodies), ends, order: order.join(','), error, complete: parser.complete, reusable: parser.reusable, parser };
}

const bytes = (text: string | Buffer) => (typeof text === 'string' ? Buffer.from(text, 'latin1') : text);

interface GoodCase {
  name: string;
  raw: string | Buffer;
  options?: ParserOptions;
  /** Call finish() after the last piece (the socket ended). */
  finish?: boolean;
  status: number;
  /** The whole headers record, exactly. */
  headers: Record<string, string | string[]>;
  body: string | Buffer;
  /** Skipped when undefined. */
  keepAlive?: boolean;
  keepAliveTimeoutSec?: number;
  reusable?: boolean;
}

function expectGood(testCase: GoodCase, split: Split) {
  const outcome = run(split.pieces, testCase.options, { finish: testCase.finish });
  const where = `${testCase.name} (${split.name})`;
  expect(outcome.error, where).toBeUndefined();
  expect(outcome.heads.length, where).toBe(1);
  const [head] = outcome.heads;
  expect(head.status, where).toBe(testCase.status);
  expect(head.headers, where).toEqual(testCase.headers);
  expect(outcome.body.equals(bytes(testCase.body)), `${where}: body ${JSON.stringify(outcome.body.toString('latin1').slice(0, 200))}`).toBe(true);
  expect(outcome.ends, where).toBe(1);
  expect(outcome.complete, where).toBe(true);
  expect(outcome.order, where).toMatch(/^head(,body)?,end$/);
  if (testCase.keepAlive !== undefined) expect(head.keepAlive, where).toBe(testCase.keepAlive);
  expect(head.keepAliveTimeoutSec, where).toBe(testCase.keepAliveTimeoutSec);
  if (testCase.reusable !== undefined) expect(outcome.reusable, where).toBe(testCase.reusable);
}

function expectParseError(outcome: Outcome, code: string, where: string) {
  expect(outcome.error, where).toBeInstanceOf(HttpParseError);
  expect(outcome.error, where).toBeInstanceOf(Error);
  expect((outcome.error as HttpParseError).code, where).toBe(code);
  expect((outcome.error as Error).message, where).not.toBe('');
}

// ---------------------------------------------------------------------------------------------
// Well-formed responses
// ---------------------------------------------------------------------------------------------

const allBytes = Buffer.from(Array.from({ length: 1024 }, (_, index) => (index * 7 + (index >> 8)) & 0xff));

const framingCases: GoodCase[] = [
  {
    name: 'content-length body',
    raw: 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world',
    status: 200,
    headers: { 'content-type': 'text/plain', 'content-length': '11' },
    body: 'hello world',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'content-length 0',
    raw: 'HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n',
    status: 201,
    headers: { 'content-length': '0' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'binary content-length body with CR, LF and NUL bytes',
    raw: Buffer.concat([bytes(`HTTP/1.1 200 OK\r\nContent-Length: ${allBytes.length}\r\n\r\n`), allBytes]),
    status: 200,
    headers: { 'content-length': String(allBytes.length) },
    body: allBytes,
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'body that looks like a response head',
    raw: 'HTTP/1.1 200 OK\r\nContent-Length: 38\r\n\r\nHTTP/1.1 500 Oops\r\nContent-Length: 0\r\n',
    status: 200,
    headers: { 'content-length': '38' },
    body: 'HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'reason phrase with spaces',
    raw: 'HTTP/1.1 404 Not Found Here\r\nContent-Length: 2\r\n\r\nno',
    status: 404,
    headers: { 'content-length': '2' },
    body: 'no',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'empty reason phrase',
    raw: 'HTTP/1.1 503 \r\nContent-Length: 4\r\n\r\nbusy',
    status: 503,
    headers: { 'content-length': '4' },
    body: 'busy',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'chunked with extensions, upper-case hex, leading zeros and trailers',
    raw:
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
      '5;name=value\r\nhello\r\n' +
      '6;a;b="x y"\r\n world\r\n' +
      'A\r\n0123456789\r\n' +
      '00a\r\nabcdefghij\r\n' +
      '0;last=1\r\nX-Trailer: t\r\nX-Another: u\r\n\r\n',
    status: 200,
    headers: { 'transfer-encoding': 'chunked' },
    body: 'hello world0123456789abcdefghij',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'chunked with CRLF inside chunk data, no trailers, "Chunked" capitalised',
    raw: 'HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n4\r\n\r\n\r\n\r\n3\r\n0\r\n\r\n0\r\n\r\n',
    status: 200,
    headers: { 'transfer-encoding': 'Chunked' },
    body: '\r\n\r\n0\r\n',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'chunked, one big chunk of binary data',
    raw: Buffer.concat([bytes(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${allBytes.length.toString(16)}\r\n`), allBytes, bytes('\r\n0\r\n\r\n')]),
    status: 200,
    headers: { 'transfer-encoding': 'chunked' },
    body: allBytes,
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'chunked with no data at all',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    status: 200,
    headers: { 'transfer-encoding': 'chunked' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'chunked wins over content-length',
    raw: 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
    status: 200,
    headers: { 'content-length': '3', 'transfer-encoding': 'chunked' },
    body: 'hello world',
  },
  {
    name: 'chunked wins over a larger content-length',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 100\r\n\r\n2\r\nok\r\n0\r\n\r\n',
    status: 200,
    headers: { 'content-length': '100', 'transfer-encoding': 'chunked' },
    body: 'ok',
  },
  {
    name: 'close-delimited body completed by finish()',
    raw: 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n',
    finish: true,
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: 'data: 1\n\ndata: 2\n\n',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'close-delimited empty body',
    raw: 'HTTP/1.1 200 OK\r\nX-A: b\r\n\r\n',
    finish: true,
    status: 200,
    headers: { 'x-a': 'b' },
    body: '',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'HEAD with content-length',
    raw: 'HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n',
    options: { headRequest: true },
    status: 200,
    headers: { 'content-length': '1234' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'HEAD with transfer-encoding chunked',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n',
    options: { headRequest: true },
    status: 200,
    headers: { 'transfer-encoding': 'chunked' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'HEAD with no framing headers',
    raw: 'HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n',
    options: { headRequest: true },
    status: 404,
    headers: { 'content-type': 'text/html' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: '204 with a content-length header',
    raw: 'HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n',
    status: 204,
    headers: { 'content-length': '5' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: '204 with no headers',
    raw: 'HTTP/1.1 204 No Content\r\n\r\n',
    status: 204,
    headers: {},
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: '304 with a content-length header',
    raw: 'HTTP/1.1 304 Not Modified\r\nETag: "abc"\r\nContent-Length: 42\r\n\r\n',
    status: 304,
    headers: { etag: '"abc"', 'content-length': '42' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: '304 with transfer-encoding chunked',
    raw: 'HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n',
    status: 304,
    headers: { 'transfer-encoding': 'chunked' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: '100 Continue before the final response',
    raw: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok',
    status: 200,
    headers: { 'content-length': '2' },
    body: 'ok',
    keepAlive: true,
    reusable: true,
  },
  {
    name: '103 Early Hints before the final response (its headers are not kept)',
    raw: 'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\nLocation: /x\r\n\r\nnew',
    status: 201,
    headers: { 'content-length': '3', location: '/x' },
    body: 'new',
    keepAlive: true,
    reusable: true,
  },
  {
    name: '100, 102 and 103 before a chunked final response',
    raw:
      'HTTP/1.1 100 Continue\r\n\r\n' +
      'HTTP/1.1 102 Processing\r\n\r\n' +
      'HTTP/1.1 103 Early Hints\r\nLink: </a.js>; rel=preload\r\nLink: </b.js>; rel=preload\r\n\r\n' +
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    status: 200,
    headers: { 'transfer-encoding': 'chunked' },
    body: 'abc',
    keepAlive: true,
    reusable: true,
  },
  {
    name: '100 Continue before a 204',
    raw: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n',
    status: 204,
    headers: {},
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'repeated content-length with the same value',
    raw: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello',
    status: 200,
    headers: { 'content-length': '5' },
    body: 'hello',
    keepAlive: true,
    reusable: true,
  },
];

describe('ResponseParser framing', () => {
  for (const testCase of framingCases) {
    it(`parses ${testCase.name}, however it is split`, () => {
      for (const split of splits(bytes(testCase.raw))) expectGood(testCase, split);
    });
  }

  it('parses a 1 MiB content-length body and a 1 MiB chunked body in random pieces', () => {
    const body = Buffer.alloc(1 << 20);
    const random = seededUniform(77);
    for (let index = 0; index < body.length; index++) body[index] = Math.floor(random() * 256);
    const plain = Buffer.concat([bytes(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), body]);
    const chunkedParts: Buffer[] = [bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')];
    for (let at = 0; at < body.length; ) {
      const size = 1 + Math.floor(random() * 20_000);
      const piece = body.subarray(at, at + size);
      chunkedParts.push(bytes(`${piece.length.toString(16)}\r\n`), piece, bytes('\r\n'));
      at += size;
    }
    chunkedParts.push(bytes('0\r\n\r\n'));
    const chunked = Buffer.concat(chunkedParts);
    for (const [raw, headers] of [
      [plain, { 'content-length': String(body.length) }],
      [chunked, { 'transfer-encoding': 'chunked' }],
    ] as const) {
      for (const split of splits(raw, { exhaustive: false, bytewise: false, seedCount: 3 })) {
        expectGood({ name: 'large body', raw, status: 200, headers, body, keepAlive: true, reusable: true }, split);
      }
    }
  });

  it('decodes any chunked encoding of any body (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        fc.array(fc.integer({ min: 1, max: 80 }), { minLength: 1, maxLength: 20 }),
        fc.array(fc.constantFrom('', ';x', ';x=1', ';name="quoted value"', ' ;ws', ';a;b;c=d'), { minLength: 1, maxLength: 5 }),
        fc.boolean(),
        fc.array(fc.integer({ min: 1, max: 2000 }), { maxLength: 12 }),
        (bodyArray, sizes, extensions, trailers, cuts) => {
          const body = Buffer.from(bodyArray);
          const parts: Buffer[] = [bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n')];
          let at = 0;
          let turn = 0;
          while (at < body.length) {
            const size = sizes[turn % sizes.length];
            const piece = body.subarray(at, at + size);
            const extension = extensions[turn % extensions.length].replace(/^ /, '');
            const hex = turn % 2 === 0 ? piece.length.toString(16) : piece.length.toString(16).toUpperCase();
            parts.push(bytes(`${hex}${extension}\r\n`), piece, bytes('\r\n'));
            at += piece.length;
            turn++;
          }
          parts.push(bytes(`0${extensions[0].replace(/^ /, '')}\r\n${trailers ? 'X-Checksum: 1\r\nX-Other: 2\r\n' : ''}\r\n`));
          const raw = Buffer.concat(parts);
          const points = [...new Set(cuts.filter((cut) => cut < raw.length))].sort((a, b) => a - b);
          const pieces: Buffer[] = [];
          let start = 0;
          for (const point of [...points, raw.length]) {
            pieces.push(raw.subarray(start, point));
            start = point;
          }
          const outcome = run(pieces);
          expect(outcome.error).toBeUndefined();
          expect(outcome.body.equals(body)).toBe(true);
          expect(outcome.ends).toBe(1);
          expect(outcome.reusable).toBe(true);
          expect(outcome.heads[0].headers).toEqual({ 'transfer-encoding': 'chunked' });
        },
      ),
      { seed: 20240611, numRuns: 300 },
    );
  });

  it('does not end a close-delimited body until finish(), then ends it once', () => {
    for (const split of splits(bytes('HTTP/1.1 200 OK\r\n\r\npartial stream'))) {
      const heads: ResponseHead[] = [];
      const bodies: Buffer[] = [];
      let ends = 0;
      const parser = new ResponseParser({ head: (head) => heads.push(head), body: (chunk) => bodies.push(Buffer.from(chunk)), end: () => ends++ });
      for (const piece of split.pieces) parser.feed(piece);
      expect(heads.length, split.name).toBe(1);
      expect(heads[0].keepAlive, split.name).toBe(false);
      expect(parser.complete, split.name).toBe(false);
      expect(parser.reusable, split.name).toBe(false);
      expect(ends, split.name).toBe(0);
      expect(Buffer.concat(bodies).toString(), split.name).toBe('partial stream');
      parser.finish();
      expect(ends, split.name).toBe(1);
      expect(parser.complete, split.name).toBe(true);
      expect(parser.reusable, split.name).toBe(false);
      expect(Buffer.concat(bodies).toString(), split.name).toBe('partial stream');
    }
  });

  it('is not complete while a framed body is still arriving', () => {
    const cases = [
      'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n',
    ];
    for (const raw of cases) {
      const outcome = run([bytes(raw)]);
      expect(outcome.error, raw).toBeUndefined();
      expect(outcome.ends, raw).toBe(0);
      expect(outcome.complete, raw).toBe(false);
      expect(outcome.reusable, raw).toBe(false);
    }
  });

  it('fires head before any body byte and end after the last, once each', () => {
    const outcome = run(randomPieces(bytes('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n'), 5));
    expect(outcome.order).toBe('head,body,end');
    expect(outcome.body.toString()).toBe('abcdef');
  });

  it('ignores finish() after the response is complete', () => {
    const outcome = run([bytes('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')]);
    expect(outcome.ends).toBe(1);
    expect(() => outcome.parser.finish()).not.toThrow();
    expect(outcome.ends).toBe(1);
    expect(outcome.complete).toBe(true);
    expect(outcome.reusable).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Headers
// ---------------------------------------------------------------------------------------------

const firstValueWins = [
  'content-type',
  'user-agent',
  'referer',
  'host',
  'authorization',
  'proxy-authorization',
  'if-modified-since',
  'if-unmodified-since',
  'from',
  'location',
  'max-forwards',
  'retry-after',
  'etag',
  'last-modified',
  'server',
  'age',
  'expires',
];

describe('ResponseParser headers', () => {
  it('lower-cases names, folds repeats with ", ", keeps every set-cookie and the first of single-valued headers', () => {
    const raw =
      'HTTP/1.1 200 OK\r\n' +
      'Set-Cookie: a=1; Path=/\r\n' +
      'X-Multi: one\r\n' +
      'set-cookie: b=2, c=3; HttpOnly\r\n' +
      'x-multi: two\r\n' +
      'Cache-Control: no-cache\r\n' +
      'CACHE-CONTROL: private\r\n' +
      'Content-Type: text/plain\r\n' +
      'content-type: text/html\r\n' +
      'Location: /first\r\n' +
      'Location: /second\r\n' +
      'X-Multi: three\r\n' +
      'SET-COOKIE: d=4\r\n' +
      'Vary: Accept\r\n' +
      'vary: Origin\r\n' +
      'Content-Length: 0\r\n\r\n';
    const expected = {
      'set-cookie': ['a=1; Path=/', 'b=2, c=3; HttpOnly', 'd=4'],
      'x-multi': 'one, two, three',
      'cache-control': 'no-cache, private',
      'content-type': 'text/plain',
      location: '/first',
      vary: 'Accept, Origin',
      'content-length': '0',
    };
    for (const split of splits(bytes(raw)))
      expectGood({ name: 'folding', raw, status: 200, headers: expected, body: '', keepAlive: true, reusable: true }, split);
  });

  for (const name of firstValueWins) {
    it(`keeps the first value of a repeated ${name}`, () => {
      const raw = `HTTP/1.1 200 OK\r\n${name}: first value\r\nContent-Length: 0\r\n${name.toUpperCase()}: second value\r\n${name}: third\r\n\r\n`;
      for (const split of splits(bytes(raw), { exhaustive: false })) {
        expectGood({ name, raw, status: 200, headers: { [name]: 'first value', 'content-length': '0' }, body: '', keepAlive: true, reusable: true }, split);
      }
    });
  }

  it('gives a single set-cookie as its value (in an array or not)', () => {
    const outcome = run([bytes('HTTP/1.1 200 OK\r\nSet-Cookie: only=1\r\nContent-Length: 0\r\n\r\n')]);
    expect([outcome.heads[0].headers['set-cookie']].flat()).toEqual(['only=1']);
  });

  it('drops a header whose value has a character that cannot be sent on (NUL, CR, LF, other controls, DEL), keeping the rest', () => {
    const raw =
      'HTTP/1.1 200 OK\r\n' +
      'X-Nul: a\x00b\r\n' +
      'X-Ctl: a\x01b\r\n' +
      'X-Esc: \x1b[31m\r\n' +
      'X-Cr: a\rb\r\n' +
      'X-Lf: a\nb\r\n' +
      'X-Del: a\x7fb\r\n' +
      'X-Multi: one\r\n' +
      'x-multi: tw\x00o\r\n' +
      'X-Multi: three\r\n' +
      'Set-Cookie: a=1\r\n' +
      'Set-Cookie: b=\x002\r\n' +
      'Content-Type: text/pl\x00ain\r\n' +
      'Content-Type: text/plain\r\n' +
      'X-Tab: a\tb\r\n' +
      'X-Latin: caf\xe9\r\n' +
      'Content-Length: 2\r\n\r\nok';
    const expected = {
      'x-multi': 'one, three',
      'set-cookie': ['a=1'],
      'content-type': 'text/plain',
      'x-tab': 'a\tb',
      'x-latin': 'caf\xe9',
      'content-length': '2',
    };
    for (const split of splits(bytes(raw), { exhaustive: false }))
      expectGood({ name: 'unsendable values', raw, status: 200, headers: expected, body: 'ok', keepAlive: true, reusable: true }, split);
  });

  it('drops a folded header when a continuation line has such a character, and the continuations of a dropped header', () => {
    const raw = 'HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\x00\r\nX-Dropped: \x00\r\n more\r\nX-Kept: c\r\n d\r\nContent-Length: 0\r\n\r\n';
    for (const split of splits(bytes(raw))) {
      expectGood({ name: 'folded', raw, status: 200, headers: { 'x-kept': 'c d', 'content-length': '0' }, body: '', keepAlive: true, reusable: true }, split);
    }
  });

  it('treats names that Object.prototype has as ordinary headers', () => {
    const names = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
    const raw = `HTTP/1.1 200 OK\r\n${names.map((name) => `${name}: one\r\n${name.toUpperCase()}: two\r\n`).join('')}Content-Length: 0\r\n\r\n`;
    const expected = Object.fromEntries([...names.map((name) => [name.toLowerCase(), 'one, two']), ['content-length', '0']]);
    for (const split of splits(bytes(raw), { exhaustive: false })) {
      expectGood({ name: 'prototype names', raw, status: 200, headers: expected, body: '', keepAlive: true, reusable: true }, split);
    }
    const [head] = run([bytes(raw)]).heads;
    expect(Object.keys(head.headers).sort()).toEqual(Object.keys(expected).sort());
    expect(Object.hasOwn(head.headers, '__proto__')).toBe(true);
  });

  it('trims optional whitespace around values and keeps empty values', () => {
    const raw = 'HTTP/1.1 200 OK\r\nX-Pad: \t padded  value \t\r\nX-Empty:\r\nX-Tight:tight\r\nContent-Length: 0\r\n\r\n';
    for (const split of splits(bytes(raw))) {
      expectGood(
        {
          name: 'whitespace',
          raw,
          status: 200,
          headers: { 'x-pad': 'padded  value', 'x-empty': '', 'x-tight': 'tight', 'content-length': '0' },
          body: '',
          keepAlive: true,
          reusable: true,
        },
        split,
      );
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Keep-alive
// ---------------------------------------------------------------------------------------------

const keepAliveCases: GoodCase[] = [
  {
    name: 'HTTP/1.1 with no connection header',
    raw: 'HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx',
    status: 200,
    headers: { 'content-length': '1' },
    body: 'x',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'HTTP/1.1 with connection: keep-alive',
    raw: 'HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx',
    status: 200,
    headers: { connection: 'keep-alive', 'content-length': '1' },
    body: 'x',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'HTTP/1.1 with connection: close',
    raw: 'HTTP/1.1 200 OK\r\nconnection: close\r\nContent-Length: 1\r\n\r\nx',
    status: 200,
    headers: { connection: 'close', 'content-length': '1' },
    body: 'x',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'HTTP/1.1 with Connection: Close (any case)',
    raw: 'HTTP/1.1 200 OK\r\nCONNECTION: Close\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n',
    status: 200,
    headers: { connection: 'Close', 'transfer-encoding': 'chunked' },
    body: 'x',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'HTTP/1.1 204 with connection: close',
    raw: 'HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n',
    status: 204,
    headers: { connection: 'close' },
    body: '',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'HTTP/1.1 close-delimited body',
    raw: 'HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\nuntil the end',
    finish: true,
    status: 200,
    headers: { connection: 'keep-alive' },
    body: 'until the end',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'HTTP/1.0 without a connection header',
    raw: 'HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx',
    status: 200,
    headers: { 'content-length': '1' },
    body: 'x',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'HTTP/1.0 with connection: keep-alive and content-length',
    raw: 'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx',
    status: 200,
    headers: { connection: 'keep-alive', 'content-length': '1' },
    body: 'x',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'HTTP/1.0 with Connection: Keep-Alive (any case) and a 304',
    raw: 'HTTP/1.0 304 Not Modified\r\nConnection: Keep-Alive\r\n\r\n',
    status: 304,
    headers: { connection: 'Keep-Alive' },
    body: '',
    keepAlive: true,
    reusable: true,
  },
  {
    name: 'HTTP/1.0 with connection: keep-alive but a close-delimited body',
    raw: 'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nbody',
    finish: true,
    status: 200,
    headers: { connection: 'keep-alive' },
    body: 'body',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'HTTP/1.0 close-delimited body',
    raw: 'HTTP/1.0 200 OK\r\n\r\nold server',
    finish: true,
    status: 200,
    headers: {},
    body: 'old server',
    keepAlive: false,
    reusable: false,
  },
  {
    name: 'keep-alive: timeout=5, max=1000',
    raw: 'HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=1000\r\nContent-Length: 0\r\n\r\n',
    status: 200,
    headers: { 'keep-alive': 'timeout=5, max=1000', 'content-length': '0' },
    body: '',
    keepAlive: true,
    keepAliveTimeoutSec: 5,
    reusable: true,
  },
  {
    name: 'keep-alive: max=100, timeout=30',
    raw: 'HTTP/1.1 200 OK\r\nkeep-alive: max=100, timeout=30\r\nContent-Length: 0\r\n\r\n',
    status: 200,
    headers: { 'keep-alive': 'max=100, timeout=30', 'content-length': '0' },
    body: '',
    keepAlive: true,
    keepAliveTimeoutSec: 30,
    reusable: true,
  },
  {
    name: 'HTTP/1.0 keep-alive with timeout=2',
    raw: 'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=2\r\nContent-Length: 2\r\n\r\nok',
    status: 200,
    headers: { connection: 'keep-alive', 'keep-alive': 'timeout=2', 'content-length': '2' },
    body: 'ok',
    keepAlive: true,
    keepAliveTimeoutSec: 2,
    reusable: true,
  },
];

describe('ResponseParser keep-alive', () => {
  for (const testCase of keepAliveCases) {
    it(`${testCase.name}: keepAlive ${testCase.keepAlive}${testCase.keepAliveTimeoutSec ? `, timeout ${testCase.keepAliveTimeoutSec}s` : ''}`, () => {
      for (const split of splits(bytes(testCase.raw))) expectGood(testCase, split);
    });
  }

  it('is not reusable when stray bytes follow the response (same piece, later piece, a pipelined response, after a 204)', () => {
    const cases: { raw: string; stray: string; body: string; options?: ParserOptions }[] = [
      { raw: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', stray: 'X', body: 'ok' },
      { raw: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', stray: 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nbad', body: 'ok' },
      { raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n', stray: '\r\n', body: 'ok' },
      { raw: 'HTTP/1.1 204 No Content\r\nContent-Length: 4\r\n\r\n', stray: 'body', body: '' },
      { raw: 'HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n', stray: 'body', body: '', options: { headRequest: true } },
    ];
    for (const { raw, stray, body, options } of cases) {
      for (const together of [true, false]) {
        const where = `${JSON.stringify(raw + stray)} ${together ? 'in one piece' : 'stray bytes in a later piece'}`;
        const pieces = together ? [bytes(raw + stray)] : [bytes(raw), bytes(stray)];
        const outcome = run(pieces, options);
        expect(outcome.error, where).toBeUndefined();
        expect(outcome.heads.length, where).toBe(1);
        expect(outcome.heads[0].keepAlive, where).toBe(true);
        expect(outcome.body.toString('latin1'), where).toBe(body);
        expect(outcome.ends, where).toBe(1);
        expect(outcome.complete, where).toBe(true);
        expect(outcome.reusable, where).toBe(false);
      }
    }
  });

  it('is reusable right after a complete keep-alive response, and not before', () => {
    const heads: ResponseHead[] = [];
    const parser = new ResponseParser({ head: (head) => heads.push(head), body() {}, end() {} });
    parser.feed(bytes('HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nab'));
    expect(parser.complete).toBe(false);
    expect(parser.reusable).toBe(false);
    parser.feed(bytes('cd'));
    expect(parser.complete).toBe(true);
    expect(parser.reusable).toBe(true);
    parser.feed(bytes('!'));
    expect(parser.reusable).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

interface BadCase {
  name: string;
  raw: string;
  code: 'HPE_INVALID_RESPONSE' | 'HPE_HEADER_OVERFLOW' | 'HPE_INCOMPLETE';
  finish?: boolean;
  options?: ParserOptions;
  /** The head was well-formed and must have been reported before the error. */
  headFired?: boolean;
  /** Body bytes reported before the error. */
  bodyBefore?: string;
}

const badCases: BadCase[] = [
  { name: 'non-numeric status', raw: 'HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'two-digit status', raw: 'HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'four-digit status', raw: 'HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'not an HTTP status line', raw: 'HELLO WORLD\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'an SSH banner', raw: 'SSH-2.0-OpenSSH_9.6\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'a request line instead of a status line', raw: 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'header line without a colon', raw: 'HTTP/1.1 200 OK\r\nNoColonHere\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'header name with a space', raw: 'HTTP/1.1 200 OK\r\nX Bad: 1\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'conflicting content-length values', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!', code: 'HPE_INVALID_RESPONSE' },
  { name: 'a NUL in content-length', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 2\x00\r\n\r\nok', code: 'HPE_INVALID_RESPONSE' },
  { name: 'a bare LF in content-length', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 2\nX: 1\r\n\r\nok', code: 'HPE_INVALID_RESPONSE' },
  { name: 'a control character in transfer-encoding', raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\x01\r\n\r\n0\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'a NUL in connection', raw: 'HTTP/1.1 200 OK\r\nConnection: close\x00\r\nContent-Length: 0\r\n\r\n', code: 'HPE_INVALID_RESPONSE' },
  { name: 'a NUL in a folded content-length', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n \x00\r\n\r\nok', code: 'HPE_INVALID_RESPONSE' },
  { name: 'non-numeric content-length', raw: 'HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nabc', code: 'HPE_INVALID_RESPONSE' },
  { name: 'negative content-length', raw: 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nx', code: 'HPE_INVALID_RESPONSE' },
  { name: 'hexadecimal content-length', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n0123456789abcdef', code: 'HPE_INVALID_RESPONSE' },
  { name: 'content-length with trailing garbage', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\nhello world!', code: 'HPE_INVALID_RESPONSE' },
  {
    name: 'bad chunk size',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n',
    code: 'HPE_INVALID_RESPONSE',
    headFired: true,
  },
  {
    name: 'negative chunk size',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n',
    code: 'HPE_INVALID_RESPONSE',
    headFired: true,
  },
  {
    name: 'bad size after a good chunk',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\nq\r\nhello\r\n0\r\n\r\n',
    code: 'HPE_INVALID_RESPONSE',
    headFired: true,
  },
  {
    name: 'chunk data not followed by CRLF',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n',
    code: 'HPE_INVALID_RESPONSE',
    headFired: true,
  },
  {
    name: 'chunk size line that is empty',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n',
    code: 'HPE_INVALID_RESPONSE',
    headFired: true,
  },
  {
    name: 'head larger than maxHeaderBytes',
    raw: `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(2000)}\r\nContent-Length: 0\r\n\r\n`,
    code: 'HPE_HEADER_OVERFLOW',
    options: { maxHeaderBytes: 1024 },
  },
  {
    name: 'head larger than the default 64 KiB',
    raw: `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\nContent-Length: 0\r\n\r\n`,
    code: 'HPE_HEADER_OVERFLOW',
  },
  {
    name: 'many headers adding up to more than 64 KiB',
    raw: `HTTP/1.1 200 OK\r\n${Array.from({ length: 2000 }, (_, index) => `X-H${index}: ${'v'.repeat(30)}\r\n`).join('')}Content-Length: 0\r\n\r\n`,
    code: 'HPE_HEADER_OVERFLOW',
  },
  { name: 'nothing received', raw: '', code: 'HPE_INCOMPLETE', finish: true },
  { name: 'head cut short in the status line', raw: 'HTTP/1.1 20', code: 'HPE_INCOMPLETE', finish: true },
  { name: 'head cut short in a header', raw: 'HTTP/1.1 200 OK\r\nContent-Le', code: 'HPE_INCOMPLETE', finish: true },
  { name: 'head cut short before the blank line', raw: 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n', code: 'HPE_INCOMPLETE', finish: true },
  { name: 'only a 100 Continue', raw: 'HTTP/1.1 100 Continue\r\n\r\n', code: 'HPE_INCOMPLETE', finish: true },
  {
    name: 'content-length body cut short',
    raw: 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello',
    code: 'HPE_INCOMPLETE',
    finish: true,
    headFired: true,
    bodyBefore: 'hello',
  },
  {
    name: 'content-length body with no byte',
    raw: 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n',
    code: 'HPE_INCOMPLETE',
    finish: true,
    headFired: true,
    bodyBefore: '',
  },
  {
    name: 'chunked body cut inside a chunk',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\nhello',
    code: 'HPE_INCOMPLETE',
    finish: true,
    headFired: true,
  },
  {
    name: 'chunked body cut between chunks',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
    code: 'HPE_INCOMPLETE',
    finish: true,
    headFired: true,
    bodyBefore: 'hello',
  },
  {
    name: 'chunked body cut in the trailers',
    raw: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Trailer: 1\r\n',
    code: 'HPE_INCOMPLETE',
    finish: true,
    headFired: true,
    bodyBefore: 'hello',
  },
];

describe('ResponseParser errors', () => {
  for (const testCase of badCases) {
    it(`throws ${testCase.code} for ${testCase.name}, however it is split`, () => {
      const raw = bytes(testCase.raw);
      const all = raw.length > 0 ? splits(raw, { exhaustive: raw.length <= 400, bytewise: raw.length <= 10_000 }) : [{ name: 'empty', pieces: [] }];
      for (const split of all) {
        const where = `${testCase.name} (${split.name})`;
        const outcome = run(split.pieces, testCase.options, { finish: testCase.finish });
        expectParseError(outcome, testCase.code, where);
        expect(outcome.ends, where).toBe(0);
        expect(outcome.complete, where).toBe(false);
        expect(outcome.reusable, where).toBe(false);
        if (testCase.headFired) expect(outcome.heads.length, where).toBe(1);
        else expect(outcome.heads.length, where).toBe(0);
        if (testCase.bodyBefore !== undefined) expect(outcome.body.toString('latin1'), where).toBe(testCase.bodyBefore);
      }
    });
  }

  it('reports a header overflow while the head is still arriving, without waiting for its end', () => {
    const parser = new ResponseParser({ head() {}, body() {}, end() {} });
    let error: unknown;
    try {
      parser.feed(bytes('HTTP/1.1 200 OK\r\nX-Endless: '));
      for (let index = 0; index < 200; index++) parser.feed(Buffer.alloc(1024, 'a'));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(HttpParseError);
    expect((error as HttpParseError).code).toBe('HPE_HEADER_OVERFLOW');
  });

  it('accepts a head just under the default limit, and a body much larger than the limit', () => {
    const big = `HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(60 * 1024)}\r\nContent-Length: 2\r\n\r\nok`;
    const outcome = run(splits(bytes(big), { exhaustive: false, bytewise: false })[0].pieces);
    expect(outcome.error).toBeUndefined();
    expect(outcome.heads[0].headers['x-big']).toHaveLength(60 * 1024);
    expect(outcome.body.toString()).toBe('ok');

    const body = Buffer.alloc(200 * 1024, 'b');
    for (const raw of [
      Buffer.concat([bytes(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n`), body]),
      Buffer.concat([bytes('HTTP/1.1 200 OK\r\n\r\n'), body]),
    ]) {
      const small = run([raw], { maxHeaderBytes: 1024 }, { finish: true });
      expect(small.error).toBeUndefined();
      expect(small.body.equals(body)).toBe(true);
      expect(small.ends).toBe(1);
    }
  });

  it('counts 1xx heads separately from the final head', () => {
    const informational = `HTTP/1.1 103 Early Hints\r\nLink: ${'l'.repeat(700)}\r\n\r\n`;
    const raw = bytes(`${informational.repeat(4)}HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok`);
    const outcome = run([raw], { maxHeaderBytes: 1024 });
    expect(outcome.error).toBeUndefined();
    expect(outcome.heads.map((head) => head.status)).toEqual([200]);
    expect(outcome.body.toString()).toBe('ok');
  });

  it('HttpParseError is an Error with a code', () => {
    const outcome = run([bytes('nonsense\r\n\r\n')]);
    expect(outcome.error).toBeInstanceOf(HttpParseError);
    expect(['HPE_INVALID_RESPONSE']).toContain((outcome.error as HttpParseError).code);
    expect(typeof (outcome.error as Error).stack).toBe('string');
  });
});
