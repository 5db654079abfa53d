/**
 * What an MCP server offers, asked with the official SDK client over streamable HTTP: `initialize`
 * and `notifications/initialized` (the SDK's `connect`), then `tools/list`, `resources/list` and
 * `prompts/list` — each only when the server declares that capability — following `nextCursor`.
 *
 * Bounded: the whole exchange has `timeoutMs` (a server that hangs is a 504 naming the step it hung
 * in), lists at most `maxPages` pages each, and reads at most `maxBytes` of answers. A failure is a
 * 502 whose code and message name the step (connect, initialize, list); a refused address is a 400.
 * No message ever carries the stored header values: text a server sent back is scrubbed of them.
 *
 * Answers are kept in memory per function instance for `cacheTtlMs`, keyed by the server's id and a
 * hash of its URL and headers, so a changed registration is never answered from the cache.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { GatewayError } from '../core/errors';
import { sha256Hex } from '../core/sha256';
import { guardedFetch, McpRedirectError, McpTooLargeError, type FetchRecord } from './guarded-fetch';
import type { McpServer } from './servers';

export const metadataLimits = {
  timeoutMs: 10_000,
  maxPages: 20,
  maxBytes: 4 * 1_048_576,
  cacheTtlMs: 5 * 60_000,
  cacheEntries: 200,
  cacheBytes: 32 * 1_048_576,
};

export type McpStep = 'connect' | 'initialize' | 'list';

export interface McpMetadata {
  object: 'mcp_server.metadata';
  id: string;
  server_info: Record<string, unknown>;
  protocol_version: string | null;
  capabilities: Record<string, unknown>;
  instructions: string | null;
  tools: unknown[];
  resources: unknown[];
  prompts: unknown[];
  /** Epoch seconds. */
  fetched_at: number;
  cached: boolean;
  /** Epoch seconds: until then a request without `refresh=true` gets this answer. */
  cache_expires_at: number;
}

const clientInfo = { name: 'llm-gateway', version: '0.1.0' };

/** Tools' output schemas are the server's business: the gateway lists tools and never calls one, so it compiles no schema. */
const noSchemaCompiler = {
  getValidator: () => (input: unknown) => ({ valid: true as const, data: input as never, errorMessage: undefined }),
};

interface CacheEntry {
  answer: Omit<McpMetadata, 'cached'>;
  expiresAt: number;
  bytes: number;
}

const cache = new Map<string, CacheEntry>();
let cachedBytes = 0;

/** The server's metadata: from this instance's cache unless `refresh`, else asked of the server. */
export async function serverMetadata(workspaceId: string, server: McpServer, options: { refresh: boolean }): Promise<McpMetadata> {
  const key = sha256Hex(JSON.stringify([workspaceId, server.id, server.url, server.headers]));
  const hit = cache.get(key);
  if (hit && !options.refresh && hit.expiresAt > Date.now()) return { ...hit.answer, cached: true };
  const answer = await fetchMetadata(server);
  remember(key, answer);
  return { ...answer, cached: false };
}

/** Forgets every cached answer (tests). */
export function clearMetadataCache(): void {
  cache.clear();
  cachedBytes = 0;
}

function remember(key: string, answer: Omit<McpMetadata, 'cached'>): void {
  const bytes = JSON.stringify(answer).length;
  forget(key);
  if (bytes > metadataLimits.cacheBytes) return;
  while (cache.size >= metadataLimits.cacheEntries || cachedBytes + bytes > metadataLimits.cacheBytes) forget(cache.keys().next().value!);
  cache.set(key, { answer, expiresAt: answer.cache_expires_at * 1000, bytes });
  cachedBytes += bytes;
}

function forget(key: string): void {
  const entry = cache.get(key);
  if (!entry) return;
  cachedBytes -= entry.bytes;
  cache.delete(key);
}

class DeadlineError extends Error {
  constructor() {
    super('deadline');
    this.name = 'DeadlineError';
  }
}

async function fetchMetadata(server: McpServer): Promise<Omit<McpMetadata, 'cached'>> {
  const record: FetchRecord = { answers: 0, bytes: 0 };
  const deadline = new AbortController();
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    fetch: guardedFetch(record, metadataLimits.maxBytes),
    requestInit: { headers: server.headers },
    // The metadata is read over POST answers; a server's own GET stream is not followed again once it ends.
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 },
  });
  // At the deadline the pending request rejects, and closing the transport stops every fetch in flight.
  const timer = setTimeout(() => {
    deadline.abort(new DeadlineError());
    void transport.close();
  }, metadataLimits.timeoutMs);
  const client = new Client(clientInfo, { capabilities: {}, jsonSchemaValidator: noSchemaCompiler });
  // Transport errors also reject the request they belong to; the rest (a GET stream the server refuses) is not the answer's concern.
  client.onerror = () => {};
  const requestOptions = () => ({ signal: deadline.signal, timeout: metadataLimits.timeoutMs + 1_000 });
  let step: McpStep = 'connect';
  let listing = '';
  try {
    try {
      await client.connect(transport, requestOptions());
    } catch (error) {
      if (record.answers > 0) step = 'initialize';
      throw error;
    }
    step = 'list';
    const capabilities = (client.getServerCapabilities() ?? {}) as Record<string, unknown>;
    const pages = async <T>(method: string, list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>): Promise<T[]> => {
      listing = method;
      const items: T[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < metadataLimits.maxPages; page++) {
        const result = await list(cursor);
        items.push(...result.items);
        cursor = result.nextCursor;
        if (cursor === undefined) return items;
      }
      throw new Error(`the server has more than ${metadataLimits.maxPages} pages of ${method.split('/')[0]}; the gateway reads at most that many`);
    };
    const tools = capabilities.tools
      ? await pages('tools/list', async (cursor) => {
          const result = await client.listTools(cursor === undefined ? {} : { cursor }, requestOptions());
          return { items: result.tools, nextCursor: result.nextCursor };
        })
      : [];
    const resources = capabilities.resources
      ? await pages('resources/list', async (cursor) => {
          const result = await client.listResources(cursor === undefined ? {} : { cursor }, requestOptions());
          return { items: result.resources, nextCursor: result.nextCursor };
        })
      : [];
    const prompts = capabilities.prompts
      ? await pages('prompts/list', async (cursor) => {
          const result = await client.listPrompts(cursor === undefined ? {} : { cursor }, requestOptions());
          return { items: result.prompts, nextCursor: result.nextCursor };
        })
      : [];
    // A server that keeps sessions is told this one is over (one that keeps none answers 405, or gave no session id).
    await transport.terminateSession().catch(() => {});
    const fetchedAt = Math.floor(Date.now() / 1000);
    return {
      object: 'mcp_server.metadata',
      id: server.id,
      server_info: { ...(client.getServerVersion() ?? {}) },
      protocol_version: transport.protocolVersion ?? null,
      capabilities,
      instructions: client.getInstructions() ?? null,
      tools,
      resources,
      prompts,
      fetched_at: fetchedAt,
      cache_expires_at: fetchedAt + metadataLimits.cacheTtlMs / 1000,
    };
  } catch (error) {
    throw stepError(server, step, listing, error, deadline.signal.aborted);
  } finally {
    clearTimeout(timer);
    // Closing aborts whatever is still in flight (a GET stream, a stalled answer).
    await client.close().catch(() => {});
  }
}

/** The answer for a failed step, with nothing of the stored headers in it. */
function stepError(server: McpServer, step: McpStep, listing: string, error: unknown, timedOut: boolean): GatewayError {
  const host = new URL(server.url).host;
  const what = step === 'list' && listing ? `list (${listing})` : step;
  if (blockedAddress(error)) {
    return new GatewayError(400, `Could not connect to the MCP server: ${scrub((error as Error).message, server.headers)}`, {
      code: 'mcp_server_not_allowed',
      param: 'url',
    });
  }
  if (timedOut) {
    return new GatewayError(504, `The MCP server at ${host} did not finish the ${what} step within ${metadataLimits.timeoutMs / 1000} s.`, {
      code: `mcp_${step}_timeout`,
    });
  }
  const scrubbed = scrub(describe(error), server.headers);
  const detail = scrubbed.length > 300 ? `${scrubbed.slice(0, 300)}…` : scrubbed;
  return new GatewayError(502, `The MCP server at ${host} failed at the ${what} step: ${detail}`, { code: `mcp_${step}_failed` });
}

/** The address guard refused the connection (the outbound client answers that as its own 400). */
function blockedAddress(error: unknown): boolean {
  if (error instanceof GatewayError) return error.code === 'custom_host_not_allowed';
  const err = error as { code?: string; cause?: { code?: string } } | undefined;
  return err?.code === 'GATEWAY_ADDRESS_BLOCKED' || err?.cause?.code === 'GATEWAY_ADDRESS_BLOCKED';
}

function describe(error: unknown): string {
  if (error instanceof McpRedirectError || error instanceof McpTooLargeError) return `${error.message}.`;
  if (error instanceof GatewayError) return error.message;
  const err = error as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | undefined;
  const code = typeof err?.code === 'string' ? err.code : typeof err?.cause?.code === 'string' ? err.cause.code : undefined;
  const message = typeof err?.message === 'string' ? err.message : String(error);
  const text = code && !message.includes(code) ? `${code}: ${message}` : message;
  return text.replace(/\s+/g, ' ').trim() || 'unknown error';
}

/**
 * Removes the stored header values from text a server or the network produced: each value whole,
 * and each word of it of six characters or more (a server may echo the token without `Bearer`).
 */
export function scrub(text: string, headers: Record<string, string>): string {
  const secrets = new Set<string>();
  for (const value of Object.values(headers)) {
    if (value.length >= 4) secrets.add(value);
    for (const word of value.split(/[\s,;:=]+/)) if (word.length >= 6) secrets.add(word);
  }
  let scrubbed = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) scrubbed = scrubbed.split(secret).join('[redacted]');
  return scrubbed;
}
