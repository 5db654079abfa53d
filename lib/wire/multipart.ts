/**
 * multipart/form-data (RFC 7578) over a body already in memory. The gateway's request bodies arrive
 * whole (an API Gateway event, bounded by the request size limit), so the parser walks one Buffer:
 * each boundary is found with `indexOf` (linear in the body), a part's bytes are a view of the body
 * (never copied), and every count and header is bounded, so no body makes it do more work than its
 * size allows.
 */

export interface MultipartPart {
  /** The `name` of its Content-Disposition. */
  name: string;
  /** The `filename` (or RFC 5987 `filename*`) of its Content-Disposition, when it is a file. */
  filename?: string;
  /** Its Content-Type, when it has one. */
  contentType?: string;
  /** A view of the request body: no copy is made. */
  data: Buffer;
}

export interface MultipartLimits {
  /** The most parts a body may hold. */
  maxParts: number;
  /** The most bytes of headers one part may carry. */
  maxHeaderBytes: number;
}

const defaultLimits: MultipartLimits = { maxParts: 32, maxHeaderBytes: 8 * 1024 };

/** A body that is not the multipart/form-data its content type announces; the message says why. */
export class MultipartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MultipartError';
  }
}

/**
 * The boundary of a `multipart/form-data` content type, or undefined for any other content type.
 * Throws MultipartError for a multipart type without a usable boundary (RFC 2046: 1 to 70
 * characters).
 */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const [type, ...params] = splitParams(contentType);
  if (type?.toLowerCase() !== 'multipart/form-data') return undefined;
  const boundary = params.find(([name]) => name === 'boundary')?.[1];
  if (!boundary || boundary.length > 70) {
    throw new MultipartError('The multipart/form-data content type needs a boundary parameter of 1 to 70 characters.');
  }
  return boundary;
}

/** The parts of a multipart/form-data body, in order. Throws MultipartError for a malformed body. */
export function parseMultipart(body: Buffer, boundary: string, limits: MultipartLimits = defaultLimits): MultipartPart[] {
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  // The first delimiter may open the body (no CRLF before it); a preamble before it is ignored.
  let cursor = body.subarray(0, delimiter.length - 2).equals(delimiter.subarray(2)) ? delimiter.length - 2 : findAfter(body, delimiter, 0);
  if (cursor < 0) throw new MultipartError(`The body holds no part: its boundary "--${boundary}" never appears.`);
  const parts: MultipartPart[] = [];
  for (;;) {
    // After a delimiter: `--` closes the body, else optional whitespace then CRLF opens a part.
    if (body[cursor] === 0x2d && body[cursor + 1] === 0x2d) return parts;
    while (body[cursor] === 0x20 || body[cursor] === 0x09) cursor++;
    if (body[cursor] !== 0x0d || body[cursor + 1] !== 0x0a) throw new MultipartError('A boundary line of the body is not followed by a line break.');
    cursor += 2;
    if (parts.length === limits.maxParts) throw new MultipartError(`The body holds more than ${limits.maxParts} parts.`);

    const headerEnd = body.indexOf('\r\n\r\n', cursor, 'latin1');
    const emptyHeaders = body[cursor] === 0x0d && body[cursor + 1] === 0x0a;
    const headersLength = emptyHeaders ? 0 : headerEnd - cursor;
    if (!emptyHeaders && (headerEnd < 0 || headersLength > limits.maxHeaderBytes)) {
      throw new MultipartError(`A part's headers do not end within ${limits.maxHeaderBytes} bytes.`);
    }
    const headers = emptyHeaders ? [] : body.toString('utf8', cursor, headerEnd).split('\r\n');
    const dataStart = emptyHeaders ? cursor + 2 : headerEnd + 4;
    const dataEnd = body.indexOf(delimiter, dataStart);
    if (dataEnd < 0) throw new MultipartError(`The body ends inside a part: its closing boundary "--${boundary}--" is missing.`);
    parts.push({ ...partHeaders(headers), data: body.subarray(dataStart, dataEnd) });
    cursor = dataEnd + delimiter.length;
  }
}

function findAfter(body: Buffer, delimiter: Buffer, from: number): number {
  const at = body.indexOf(delimiter, from);
  return at < 0 ? -1 : at + delimiter.length;
}

function partHeaders(lines: string[]): Omit<MultipartPart, 'data'> {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new MultipartError('A part has a header line without a name.');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-disposition') disposition = value;
    else if (name === 'content-type') contentType = value;
  }
  if (!disposition) throw new MultipartError('A part has no Content-Disposition header naming its field.');
  const [type, ...params] = splitParams(disposition);
  if (type?.toLowerCase() !== 'form-data') throw new MultipartError('A part\'s Content-Disposition is not "form-data".');
  const param = (wanted: string) => params.find(([key]) => key === wanted)?.[1];
  const name = param('name');
  if (name === undefined) throw new MultipartError('A part\'s Content-Disposition has no "name".');
  const extended = param('filename*');
  const filename = (extended === undefined ? undefined : decodeExtended(extended)) ?? param('filename');
  return { name, ...(filename === undefined ? {} : { filename }), ...(contentType ? { contentType } : {}) };
}

/**
 * `type; a=b; c="d; \"e\""` → `['type', ['a', 'b'], ['c', 'd; "e"']]`, parameter names in lower
 * case. A quoted value keeps its `;` and unescapes `\x`.
 */
function splitParams(header: string): [string | undefined, ...[string, string][]] {
  const semicolon = header.indexOf(';');
  const type = (semicolon < 0 ? header : header.slice(0, semicolon)).trim();
  const params: [string, string][] = [];
  let at = semicolon < 0 ? header.length : semicolon + 1;
  while (at < header.length) {
    const equals = header.indexOf('=', at);
    if (equals < 0) break;
    const key = header.slice(at, equals).trim().toLowerCase();
    at = equals + 1;
    while (header[at] === ' ') at++;
    let value = '';
    if (header[at] === '"') {
      at++;
      while (at < header.length && header[at] !== '"') {
        if (header[at] === '\\' && at + 1 < header.length) at++;
        value += header[at];
        at++;
      }
      const next = header.indexOf(';', at);
      at = next < 0 ? header.length : next + 1;
    } else {
      const next = header.indexOf(';', at);
      value = header.slice(at, next < 0 ? header.length : next).trim();
      at = next < 0 ? header.length : next + 1;
    }
    params.push([key, value]);
  }
  return [type, ...params];
}

/** RFC 5987 `utf-8''na%C3%AFve.txt`; undefined for another charset or a bad escape. */
function decodeExtended(value: string): string | undefined {
  const match = /^utf-8'[^']*'(.*)$/i.exec(value);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}
