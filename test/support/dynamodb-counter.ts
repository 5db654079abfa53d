import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DynamoDbCounter {
  /** Point a gateway's `GATEWAY_DYNAMODB_ENDPOINT` here. */
  url: string;
  /** How many GetItem calls asked for an item with this partition key. */
  getItems(pk: string): number;
  /** How many GetItem calls asked for an item whose partition key starts with this. */
  getItemsStartingWith(prefix: string): number;
  close(): Promise<void>;
}

/**
 * A proxy in front of a DynamoDB endpoint that counts GetItem calls by partition key, so a test can
 * tell a lookup served from a gateway's memory from one that reached the table.
 */
export async function startDynamoDbCounter(target: string): Promise<DynamoDbCounter> {
  const counts = new Map<string, number>();
  const upstream = new URL(target);
  const server = createServer(async (incoming, outgoing) => {
    const body = await readAll(incoming);
    if (String(incoming.headers['x-amz-target']).endsWith('.GetItem')) {
      const pk = JSON.parse(body.toString('utf8')).Key?.pk?.S;
      if (typeof pk === 'string') counts.set(pk, (counts.get(pk) ?? 0) + 1);
    }
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    forwarded.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const sum = (matches: (pk: string) => boolean) => [...counts].reduce((total, [pk, count]) => total + (matches(pk) ? count : 0), 0);
  return {
    url: `http://127.0.0.1:${port}`,
    getItems: (pk) => counts.get(pk) ?? 0,
    getItemsStartingWith: (prefix) => sum((pk) => pk.startsWith(prefix)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readAll(stream: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
