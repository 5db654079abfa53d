import { maxLength, minLength, object, optional, record, refine, string } from 'zod/mini';
import { movedSecretError } from '../config/secret-destinations';
import { badRequest, notFound } from '../core/errors';
import { answerFields, controlRoutes, defineRoute, knownFields, messageAt } from '../http/define-route';
import { listEnvelope, pageQuery } from '../http/pagination';
import { serverMetadata } from '../mcp/metadata';
import {
  createMcpServer,
  deleteMcpServer,
  getMcpServer,
  headerHint,
  headerHints,
  listMcpServers,
  maskedHeaderValue,
  replaceMcpServer,
  type McpServer,
  type McpServerSummary,
} from '../mcp/servers';

const serverNotFound = (id: string) => notFound(`No MCP server ${id.slice(0, 100)} in this workspace.`, 'mcp_server_not_found');

const maxHeaders = 20;
const maxHeaderValue = 8_192;
const invalidName = 'name must be a string of 1 to 255 characters.';
const invalidUrl =
  'url must be the http:// or https:// URL of the server’s streamable HTTP endpoint (at most 2,048 characters, no user:password@: send credentials in headers).';
const headerToken = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/** Header values HTTP can carry: no control characters but tab, and no characters beyond one byte. */
const headerValuePattern = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers the client writes itself for the protocol and the connection; a stored one would break either. */
const reservedHeaders = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
]);

function isServerUrl(text: string): boolean {
  if (text.length > 2_048) return false;
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '' && url.hostname !== '';
  } catch {
    return false;
  }
}

const headersSchema = record(string(), string(messageAt('must be a string.')), messageAt('must be an object of header names to values.')).check(
  refine((headers) => Object.keys(headers).length <= maxHeaders, { error: `headers holds at most ${maxHeaders} headers.` }),
);

const serverBody = knownFields(
  {
    name: string(invalidName).check(minLength(1, invalidName), maxLength(255, invalidName)),
    url: string(invalidUrl).check(refine(isServerUrl, invalidUrl)),
    headers: optional(headersSchema),
    ...answerFields(['object', 'id', 'created_at', 'updated_at']),
  },
  (field) => `Unknown field "${field.slice(0, 100)}"; an MCP server takes name, url and headers.`,
);

type ServerBody = { name: string; url: string; headers?: Record<string, string> };

/** Refuses a header the gateway could not send, or one the protocol owns; a 400 naming it. */
function checkHeaders(headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) {
    const param = `headers.${name.slice(0, 100)}`;
    if (!headerToken.test(name))
      throw badRequest(`${param} is not a header name HTTP allows (letters, digits and !#$%&'*+.^_\`|~-, at most 100).`, param, 'invalid_mcp_server_body');
    if (reservedHeaders.has(name.toLowerCase()))
      throw badRequest(`${param} is written by the gateway for the protocol or the connection and cannot be stored.`, param, 'invalid_mcp_server_body');
    if (value.length === 0 || value.length > maxHeaderValue || !headerValuePattern.test(value))
      throw badRequest(
        `${param} must be 1 to ${maxHeaderValue} characters HTTP allows in a header value (no line breaks or other control characters).`,
        param,
        'invalid_mcp_server_body',
      );
  }
}

const isMask = (value: string) => value === maskedHeaderValue || value.startsWith('…');

/**
 * `/v1/mcp-servers`: a workspace's registered MCP servers (streamable HTTP), and what each offers.
 *
 * - `POST /v1/mcp-servers` `{name, url, headers}` (admin) stores it; the server is not contacted.
 * - `GET /v1/mcp-servers?limit=&after=` lists them newest first; `GET /v1/mcp-servers/{mcpServerId}` answers one.
 *   Every answer shows each header's name with a hint of its value, never the value.
 * - `PUT /v1/mcp-servers/{mcpServerId}` replaces it (admin). Without `headers` the stored ones stay; a
 *   value sent back as its hint keeps the stored value, unless the URL's origin changes (400
 *   `credentials_required`: moving a secret takes the secret).
 * - `DELETE /v1/mcp-servers/{mcpServerId}` (admin).
 * - `GET /v1/mcp-servers/{mcpServerId}/metadata?refresh=` connects and answers server info,
 *   protocol version, capabilities, tools, resources and prompts (cached 5 minutes per instance).
 */
export const mcpServersRoute = controlRoutes(
  defineRoute({
    method: 'POST',
    path: '/v1/mcp-servers',
    role: 'admin',
    body: serverBody,
    invalidCode: 'invalid_mcp_server_body',
    async handler({ body }, { auth }) {
      const { name, url, headers = {} } = body as ServerBody;
      checkHeaders(headers);
      const masked = Object.keys(headers).find((header) => isMask(headers[header]!));
      if (masked !== undefined)
        throw badRequest(`headers.${masked} is a masked hint as answers show it; send the real value.`, `headers.${masked}`, 'invalid_mcp_server_body');
      return present(await createMcpServer(auth.workspaceId, { name, url: new URL(url).href, headers }));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/mcp-servers',
    role: 'member',
    query: pageQuery(),
    handler: async ({ query }, { auth }) => listEnvelope(await listMcpServers(auth.workspaceId, query), presentSummary),
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/mcp-servers/{mcpServerId}',
    role: 'member',
    params: object({ mcpServerId: string() }),
    async handler({ params: { mcpServerId } }, { auth }) {
      const found = await getMcpServer(auth.workspaceId, mcpServerId);
      if (!found) throw serverNotFound(mcpServerId);
      return present(found);
    },
  }),
  defineRoute({
    method: 'PUT',
    path: '/v1/mcp-servers/{mcpServerId}',
    role: 'admin',
    params: object({ mcpServerId: string() }),
    body: serverBody,
    invalidCode: 'invalid_mcp_server_body',
    async handler({ params: { mcpServerId }, body }, { auth }) {
      const current = await getMcpServer(auth.workspaceId, mcpServerId);
      if (!current) throw serverNotFound(mcpServerId);
      const { name, url: sentUrl, headers: sent } = body as ServerBody;
      const url = new URL(sentUrl).href;
      const headers: Record<string, string> = {};
      const kept: string[] = [];
      for (const [header, value] of Object.entries(sent ?? current.headers)) {
        if (sent === undefined || isMask(value)) {
          const stored = current.headers[header];
          if (stored === undefined || (sent !== undefined && value !== headerHint(stored) && value !== maskedHeaderValue))
            throw badRequest(
              `headers.${header} is a masked hint, and no stored value of that header has it; send the real value.`,
              `headers.${header}`,
              'invalid_mcp_server_body',
            );
          headers[header] = stored;
          kept.push(`headers.${header}`);
        } else headers[header] = value;
      }
      checkHeaders(headers);
      if (kept.length > 0 && new URL(url).origin !== new URL(current.url).origin) throw movedSecretError(kept, 'server URL', maskedHeaderValue);
      const replaced = await replaceMcpServer(auth.workspaceId, mcpServerId, { name, url, headers }, current.created_at);
      if (!replaced) throw serverNotFound(mcpServerId);
      return present(replaced);
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/v1/mcp-servers/{mcpServerId}',
    role: 'admin',
    params: object({ mcpServerId: string() }),
    async handler({ params: { mcpServerId } }, { auth }) {
      if (!(await deleteMcpServer(auth.workspaceId, mcpServerId))) throw serverNotFound(mcpServerId);
      return { id: mcpServerId, object: 'mcp_server', deleted: true };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/mcp-servers/{mcpServerId}/metadata',
    role: 'member',
    params: object({ mcpServerId: string() }),
    query: object({
      refresh: optional(string().check(refine((value) => value === 'true' || value === 'false', { error: 'refresh must be true or false.' }))),
    }),
    invalidCode: 'invalid_request',
    async handler({ params: { mcpServerId }, query }, { auth }) {
      const server = await getMcpServer(auth.workspaceId, mcpServerId);
      if (!server) throw serverNotFound(mcpServerId);
      return serverMetadata(auth.workspaceId, server, { refresh: query.refresh === 'true' });
    },
  }),
);

function present(server: McpServer) {
  return presentSummary({ ...server, header_hints: headerHints(server.headers) });
}

function presentSummary(server: McpServerSummary) {
  return {
    object: 'mcp_server',
    id: server.id,
    name: server.name,
    url: server.url,
    headers: server.header_hints,
    created_at: server.created_at,
    updated_at: server.updated_at,
  };
}
