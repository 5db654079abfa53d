import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClient, resetClients } from '../../lib/store/clients';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch, openaiClient, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';
import { collectSse } from '../support/sse';

connectToGatewayStore();
beforeAll(() => {
  process.env.GATEWAY_STATE_TABLE = stateTable;
  resetClients();
});

const json = { 'content-type': 'application/json' };
const dimensions = 8;

/**
 * An OpenAI-format embeddings upstream whose vectors the test chooses: a text set in `vectors`
 * gets that vector, any other text one of its own far from every chosen one. `failing` answers
 * 500, `slow` answers after 3 s (beyond the cache's 2 s limit).
 */
class ControlledEmbedder {
  readonly vectors = new Map<string, number[]>();
  readonly inputs: string[] = [];
  failing = false;
  slow = false;
  /** Answers after this long (within the cache's 2 s limit). */
  delayMs = 0;
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        const { input, model } = JSON.parse(text);
        this.inputs.push(input);
        const answer = (status: number, body: unknown) => {
          if (response.destroyed) return;
          response.writeHead(status, json).end(JSON.stringify(body));
        };
        if (this.failing) return answer(500, { error: { message: 'embedder down', type: 'server_error' } });
        const body = {
          object: 'list',
          model,
          data: [{ object: 'embedding', index: 0, embedding: this.vectors.get(input) ?? unrelatedVector(input) }],
          usage: { prompt_tokens: 5, total_tokens: 5 },
        };
        if (this.slow || this.delayMs > 0) setTimeout(() => answer(200, body), this.slow ? 3_000 : this.delayMs);
        else answer(200, body);
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A vector of its own for each text, in dimensions the chosen vectors leave at 0. */
function unrelatedVector(text: string): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  let hash = 0;
  for (const char of text) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  vector[4 + (hash % 4)] = 1;
  vector[hash % 4] = 0.01;
  return vector;
}

const capital = [1, 0, 0, 0, 0, 0, 0, 0];
/** cosine 0.995 with `capital`. */
const capitalAgain = [1, 0.1, 0, 0, 0, 0, 0, 0];
/** cosine 0.0 with `capital`. */
const rivers = [0, 0, 1, 0, 0, 0, 0, 0];

let upstream: FakeUpstream;
const embedder = new ControlledEmbedder();
let counter = 0;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  await embedder.start();
  embedder.vectors.set('What is the capital of France?', capital);
  embedder.vectors.set("What's the capital city of France?", capitalAgain);
  embedder.vectors.set('Which rivers cross Paris?', rivers);
  embedder.vectors.set('Weather in Paris, please: call a tool', capital);
  embedder.vectors.set('Weather in Paris? call a tool', capitalAgain);
});
afterAll(async () => {
  await upstream.close();
  await embedder.close();
});

async function ownerPost(path: string, body: unknown, method = 'POST'): Promise<any> {
  const response = await gatewayFetch(path, { method, headers: json, body: JSON.stringify(body) });
  const answer = await response.json();
  expect(response.status, JSON.stringify(answer)).toBe(200);
  return answer;
}

/** A workspace of its own with an admin key, an embeddings catalog entry, and (unless told not to) semantic settings. */
async function semanticWorkspace(options: { settings?: boolean; threshold?: number } = {}) {
  const workspace = await ownerPost('/workspaces', { name: `Semantic ${++counter} ${Date.now()}` });
  const key = (await ownerPost('/api-keys', { name: 'semantic cache test', role: 'admin', workspace_id: workspace.id })).key as string;
  const as = async (path: string, body: unknown, method = 'POST') => {
    const response = await gatewayFetch(path, { method, headers: { ...json, 'x-gateway-api-key': key }, body: JSON.stringify(body) });
    const answer = await response.json();
    expect(response.status, JSON.stringify(answer)).toBe(200);
    return answer;
  };
  await as('/providers', { slug: 'embedder', provider: 'openai', name: 'Embeddings', api_key: 'sk-embed', custom_host: embedder.url });
  if (options.settings !== false) {
    await as(
      `/workspaces/${workspace.id}`,
      { cache: { embedding_provider: '@embedder', embedding_model: 'text-embedding-3-small', similarity_threshold: options.threshold ?? 0.95 } },
      'PUT',
    );
  }
  const prefix = `/semantic/${counter}-${Date.now()}`;
  return {
    workspaceId: workspace.id as string,
    key,
    prefix,
    config: { provider: 'openai', api_key: 'sk-chat', custom_host: `${upstream.url}${prefix}/v1`, cache: { mode: 'semantic', max_age: 3600 } },
    calls: () => upstream.requests.filter((request) => request.path.startsWith(prefix)).length,
  };
}

type Workspace = Awaited<ReturnType<typeof semanticWorkspace>>;

async function ask(ws: Workspace, body: Record<string, unknown>, headers: Record<string, string> = {}, config: unknown = ws.config) {
  const response = await gatewayFetch('/chat/completions', {
    method: 'POST',
    headers: { ...json, 'x-gateway-api-key': ws.key, 'x-gateway-config': JSON.stringify(config), ...headers },
    body: JSON.stringify(body),
  });
  return { response, status: response.headers.get('x-gateway-cache-status'), text: await response.text() };
}

const question = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You answer briefly.' },
    { role: 'user', content },
  ],
  ...extra,
});

/** Semantic items land after the answer: waits until the workspace holds `entries` × 10 of them. */
async function indexed(workspaceId: string, entries: number): Promise<void> {
  let count = 0;
  for (let tries = 0; tries < 100; tries++) {
    count = await semanticItemCount(workspaceId);
    if (count >= entries * 10) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(count).toBe(entries * 10);
}

/** The entry id of every semantic item of the workspace (a scan: the emulator's table is small, and only a test does this). */
async function semanticItemIds(workspaceId: string): Promise<string[]> {
  const ids: string[] = [];
  let start: Record<string, any> | undefined;
  do {
    const page = await dynamoClient().send(
      new ScanCommand({
        TableName: stateTable,
        FilterExpression: 'begins_with(pk, :prefix)',
        ExpressionAttributeValues: marshall({ ':prefix': `SEMCACHE#${workspaceId}#` }),
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }),
    );
    for (const item of page.Items ?? []) ids.push(item.sk!.S!);
    start = page.LastEvaluatedKey;
  } while (start);
  return ids;
}

const semanticItemCount = async (workspaceId: string) => (await semanticItemIds(workspaceId)).length;

describe('semantic cache', () => {
  it('answers a question asked in other words from the cache, and a different question from the provider', async () => {
    const ws = await semanticWorkspace();
    const first = await ask(ws, question('What is the capital of France?'));
    expect(first.status).toBe('SEMANTIC MISS');
    await indexed(ws.workspaceId, 1);

    const again = await ask(ws, question("What's the capital city of France?"));
    expect(again.status).toBe('SEMANTIC HIT');
    expect(again.text).toBe(first.text);
    const exact = await ask(ws, question('What is the capital of France?'));
    expect(exact.status).toBe('HIT');

    const other = await ask(ws, question('Which rivers cross Paris?'));
    expect(other.status).toBe('SEMANTIC MISS');
    expect(JSON.parse(other.text).choices[0].message.content).toContain('rivers');
    expect(ws.calls()).toBe(2);
  });

  it('shares an answer only between requests equal in everything but the last user message', async () => {
    const ws = await semanticWorkspace();
    expect((await ask(ws, question('What is the capital of France?'))).status).toBe('SEMANTIC MISS');
    await indexed(ws.workspaceId, 1);
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    const variants = [
      question("What's the capital city of France?", { model: 'gpt-4o' }),
      question("What's the capital city of France?", { temperature: 0.2 }),
      question("What's the capital city of France?", { tools }),
      {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You answer at length.' },
          { role: 'user', content: "What's the capital city of France?" },
        ],
      },
      {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You answer briefly.' },
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: 'Hi!' },
          { role: 'user', content: "What's the capital city of France?" },
        ],
      },
    ];
    for (const variant of variants) expect((await ask(ws, variant)).status, JSON.stringify(variant)).toBe('SEMANTIC MISS');
    // Another namespace is another partition.
    expect((await ask(ws, question("What's the capital city of France?"), { 'x-gateway-cache-namespace': 'elsewhere' })).status).toBe('SEMANTIC MISS');
    expect(ws.calls()).toBe(1 + variants.length + 1);
  });

  it('never serves an answer that calls tools for another question', async () => {
    const ws = await semanticWorkspace();
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const first = await ask(ws, question('Weather in Paris, please: call a tool', { tools }));
    expect(first.status).toBe('SEMANTIC MISS');
    expect(JSON.parse(first.text).choices[0].message.tool_calls).toHaveLength(1);
    // Kept for its exact key only.
    expect((await ask(ws, question('Weather in Paris, please: call a tool', { tools }))).status).toBe('HIT');
    expect(await semanticItemCount(ws.workspaceId)).toBe(0);
    expect((await ask(ws, question('Weather in Paris? call a tool', { tools }))).status).toBe('SEMANTIC MISS');
    expect(ws.calls()).toBe(2);
  });

  it('replays a semantic hit as a stream, and logs it with the tokens it saved and the embedding it spent', async () => {
    const ws = await semanticWorkspace();
    const traceId = `semantic-log-${Date.now()}`;
    const first = await ask(ws, question('What is the capital of France?'), { 'x-gateway-trace-id': traceId });
    await indexed(ws.workspaceId, 1);
    const streamed = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...json, 'x-gateway-api-key': ws.key, 'x-gateway-config': JSON.stringify(ws.config), 'x-gateway-trace-id': traceId },
      body: JSON.stringify(question("What's the capital city of France?", { stream: true })),
    });
    expect(streamed.headers.get('x-gateway-cache-status')).toBe('SEMANTIC HIT');
    const events = await collectSse(streamed);
    const chunks = events.json as any[];
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(JSON.parse(first.text).choices[0].message.content);
    expect(events.doneLast).toBe(true);

    const records = await waitForLogs(traceId, { count: 2, gatewayKey: ws.key });
    const byStatus = Object.fromEntries(records.map((record: any) => [record.cache_status, record]));
    expect(byStatus['SEMANTIC HIT'].usage).toBeUndefined();
    expect(byStatus['SEMANTIC HIT'].saved_usage).toEqual(byStatus['SEMANTIC MISS'].usage);
    expect(byStatus['SEMANTIC HIT'].cache_embedding_usage).toMatchObject({ prompt_tokens: 5, total_tokens: 5 });
    expect(ws.calls()).toBe(1);
  });

  it('answers from the provider when the embeddings upstream fails or is too slow', async () => {
    const ws = await semanticWorkspace();
    embedder.failing = true;
    try {
      const failed = await ask(ws, question('What is the capital of France?'));
      expect([failed.response.status, failed.status]).toEqual([200, 'SEMANTIC MISS']);
    } finally {
      embedder.failing = false;
    }
    // Kept for its exact key, though it could not be indexed by meaning.
    expect((await ask(ws, question('What is the capital of France?'))).status).toBe('HIT');
    expect(await semanticItemCount(ws.workspaceId)).toBe(0);

    embedder.slow = true;
    try {
      const started = Date.now();
      const slow = await ask(ws, question("What's the capital city of France?"));
      expect([slow.response.status, slow.status]).toEqual([200, 'SEMANTIC MISS']);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      embedder.slow = false;
    }
    expect(ws.calls()).toBe(2);
  });

  it('behaves as simple without the workspace settings, and for a last user message that is not text', async () => {
    const plain = await semanticWorkspace({ settings: false });
    expect((await ask(plain, question('What is the capital of France?'))).status).toBe('MISS');
    expect((await ask(plain, question('What is the capital of France?'))).status).toBe('HIT');
    expect((await ask(plain, question("What's the capital city of France?"))).status).toBe('MISS');

    const ws = await semanticWorkspace();
    const image = {
      model: 'gpt-4o-mini',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    };
    expect((await ask(ws, image)).status).toBe('MISS');
    expect((await ask(ws, image)).status).toBe('HIT');
    const before = embedder.inputs.length;
    await ask(ws, image);
    expect(embedder.inputs.length).toBe(before);
  });

  it('keeps workspaces apart, and purges the vectors with the answers', async () => {
    const ws = await semanticWorkspace();
    const other = await semanticWorkspace();
    expect((await ask(ws, question('What is the capital of France?'))).status).toBe('SEMANTIC MISS');
    await indexed(ws.workspaceId, 1);
    expect(
      (
        await ask(
          other,
          question("What's the capital city of France?"),
          {},
          { ...ws.config, custom_host: other.config.custom_host.replace(other.prefix, ws.prefix) },
        )
      ).status,
    ).toBe('SEMANTIC MISS');

    const purge = await gatewayFetch('/cache', { method: 'DELETE', headers: { 'x-gateway-api-key': ws.key } });
    expect((await purge.json()).deleted).toBe(1);
    expect(await semanticItemCount(ws.workspaceId)).toBe(0);
    expect(await semanticItemCount(other.workspaceId)).toBe(10);
  });

  it('replaces the vector of an answer a forced refresh rewrites', async () => {
    const ws = await semanticWorkspace();
    const client = openaiClient({ gatewayKey: ws.key, headers: { 'x-gateway-config': JSON.stringify(ws.config) } });
    const first = await client.chat.completions.create(question('What is the capital of France?') as any).withResponse();
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('SEMANTIC MISS');
    await indexed(ws.workspaceId, 1);
    const [original] = await semanticItemIds(ws.workspaceId);
    const refreshed = await client.chat.completions
      .create(question('What is the capital of France?') as any, { headers: { 'x-gateway-cache-force-refresh': 'true' } })
      .withResponse();
    expect(refreshed.response.headers.get('x-gateway-cache-status')).toBe('REFRESH');
    // The refresh wrote 10 new items and deleted the 10 of the answer it replaced.
    const onlyNewItems = (ids: string[]) => ids.length === 10 && ids.every((id) => id !== original && id === ids[0]);
    let ids = await semanticItemIds(ws.workspaceId);
    for (let tries = 0; tries < 100 && !onlyNewItems(ids); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      ids = await semanticItemIds(ws.workspaceId);
    }
    expect(onlyNewItems(ids), JSON.stringify(ids)).toBe(true);
    const again = await client.chat.completions.create(question("What's the capital city of France?") as any).withResponse();
    expect(again.response.headers.get('x-gateway-cache-status')).toBe('SEMANTIC HIT');
    expect(again.data.id).toBe(refreshed.data.id);
  });

  it("logs a forced refresh's embedding tokens even when the provider answers first", async () => {
    const ws = await semanticWorkspace();
    const traceId = `semantic-refresh-${Date.now()}`;
    embedder.delayMs = 700;
    try {
      const refreshed = await ask(ws, question('What is the capital of France?'), { 'x-gateway-trace-id': traceId, 'x-gateway-cache-force-refresh': 'true' });
      expect(refreshed.status).toBe('REFRESH');
    } finally {
      embedder.delayMs = 0;
    }
    const [record] = await waitForLogs(traceId, { gatewayKey: ws.key });
    expect(record.cache_status).toBe('REFRESH');
    expect(record.cache_embedding_usage).toMatchObject({ prompt_tokens: 5, total_tokens: 5 });
  });
});
