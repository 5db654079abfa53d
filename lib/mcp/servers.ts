/**
 * The MCP servers a workspace registers: a name, a streamable HTTP URL, and the headers the gateway
 * sends them (usually a token). The headers are sealed with the workspace's envelope encryption and
 * only ever opened to connect; answers show their names and a masked hint of each value.
 * Registering stores; it never contacts the server.
 */
import { newId } from '../core/ids';
import { decryptSecrets, encryptSecrets, isBlob } from '../secrets/envelope';
import { deleteMcpServerItem, getMcpServerItem, listMcpServerItems, putMcpServerItem, type McpServerItem } from '../store/mcp-servers';
import type { Page } from '../store/newest-first';

export interface McpServerFields {
  name: string;
  url: string;
  /** Header name → value, sent on every request to the server. */
  headers: Record<string, string>;
}

export interface McpServer extends McpServerFields {
  /** `mcp_…`, time-sortable. */
  id: string;
  /** Epoch seconds. */
  created_at: number;
  updated_at: number;
}

/** A server as answers show it: each header value replaced by its hint (lists read it without decrypting). */
export type McpServerSummary = Omit<McpServer, 'headers'> & { header_hints: Record<string, string> };

const idPattern = /^mcp_[0-9a-z]{26}$/;
const now = () => Math.floor(Date.now() / 1000);

/** What answers show for a stored header value: `…` and its last 4 characters when it has 20 or more, else only that it is set. */
export const maskedHeaderValue = '********';

export function headerHint(value: string): string {
  return value.length >= 20 ? `…${value.slice(-4)}` : maskedHeaderValue;
}

export function headerHints(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, headerHint(value)]));
}

export function isMcpServerId(value: string): boolean {
  return idPattern.test(value);
}

export async function createMcpServer(workspaceId: string, fields: McpServerFields): Promise<McpServer> {
  const at = now();
  const saved: McpServer = { id: newId('mcp'), ...fields, created_at: at, updated_at: at };
  if (!(await putMcpServerItem(await seal(workspaceId, saved), 'ifAbsent')))
    throw new Error(`MCP server id ${saved.id} is taken; ids are random, so this should not happen.`);
  return saved;
}

export async function getMcpServer(workspaceId: string, id: string): Promise<McpServer | undefined> {
  if (!isMcpServerId(id)) return undefined;
  const item = await getMcpServerItem(workspaceId, id);
  return item && open(workspaceId, item);
}

export async function listMcpServers(workspaceId: string, page: { limit: number; after?: string }): Promise<Page<McpServerSummary>> {
  const { data, has_more } = await listMcpServerItems(workspaceId, page);
  return { data: data.map(({ id, name, url, header_hints, created_at, updated_at }) => ({ id, name, url, header_hints, created_at, updated_at })), has_more };
}

/** Replaces a server whole; undefined when the workspace has none of that id. */
export async function replaceMcpServer(workspaceId: string, id: string, fields: McpServerFields, createdAt: number): Promise<McpServer | undefined> {
  const saved: McpServer = { id, ...fields, created_at: createdAt, updated_at: now() };
  return (await putMcpServerItem(await seal(workspaceId, saved), 'ifPresent')) ? saved : undefined;
}

export async function deleteMcpServer(workspaceId: string, id: string): Promise<boolean> {
  return isMcpServerId(id) && deleteMcpServerItem(workspaceId, id);
}

async function seal(workspaceId: string, saved: McpServer): Promise<McpServerItem> {
  const secrets = await encryptSecrets({ headers: saved.headers }, workspaceId);
  return {
    id: saved.id,
    workspace_id: workspaceId,
    name: saved.name,
    url: saved.url,
    secrets,
    header_hints: headerHints(saved.headers),
    created_at: saved.created_at,
    updated_at: saved.updated_at,
  };
}

async function open(workspaceId: string, item: McpServerItem): Promise<McpServer> {
  if (!isBlob(item.secrets)) throw new Error(`MCP server ${item.id} has no sealed headers.`);
  const { headers } = await decryptSecrets<{ headers: Record<string, string> }>(item.secrets, workspaceId);
  return { id: item.id, name: item.name, url: item.url, headers, created_at: item.created_at, updated_at: item.updated_at };
}
