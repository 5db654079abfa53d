import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Lower-cased names; the last value when repeated. */
  headers: Record<string, string>;
  body: Buffer;
  /** Every byte the server sent before it closed the connection. */
  raw: Buffer;
}

/**
 * Writes `bytes` as they are on a new TCP connection to `url`'s host and port, and reads until the
 * server closes the connection (or `timeoutMs` passes, which fails): for requests no HTTP client
 * would send, such as raw non-ASCII bytes in the request target.
 */
export function rawExchange(url: string, bytes: Buffer | string, timeoutMs = 5_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`The server did not close the connection within ${timeoutMs} ms; it sent ${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A reset after the answer still leaves the answer to look at.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks);
      const end = raw.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`No complete response head: ${JSON.stringify(raw.toString('latin1'))}`));
      const [statusLine, ...lines] = raw.toString('latin1', 0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: raw.subarray(end + 4), raw });
    });
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes);
  });
}
