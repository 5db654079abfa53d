/**
 * Lets a test process use the shared gateway's store directly, as an inference function would:
 * lib/ code run in the test (hot-path lookups, `putApiKey`, raw `dynamoClient()` reads) then sees
 * the same emulator, control table and local master key file as the gateway.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { generateApiKeySecret, putApiKey } from '../../lib/auth/api-keys';
import { resetClients } from '../../lib/store/clients';
import { env, gatewayFetch } from './gateway-client';

/** serverless.yml's ControlTable (`${self:service}-${sls:stage}-control`) for the shared gateway's stage. */
export const controlTable = 'llm-gateway-local-control';

/** serverless.yml's StateTable (`${self:service}-${sls:stage}-state`) for the shared gateway's stage. */
export const stateTable = 'llm-gateway-local-state';

/** What `connectToGatewayStore()` finds and creates; filled in before the file's first test. */
export interface GatewayStore {
  /** The workspace of the shared gateway's admin key. */
  workspaceId: string;
  /** A second workspace, with an admin key of its own. */
  otherWorkspaceId: string;
  otherWorkspaceKey: string;
}

/**
 * Registers the file's hooks: before its tests, points this process's environment (and the cached
 * AWS clients) at the shared gateway's store, finds the admin's workspace and creates an admin key
 * of another workspace; after them, restores the environment as it was when this was called. Call
 * it at the top level of a test file; read the answer's fields inside tests and hooks registered
 * after it, not at the top level.
 */
export function connectToGatewayStore(): GatewayStore {
  const savedEnv = { ...process.env };
  const store: GatewayStore = { workspaceId: '', otherWorkspaceId: `ws_other_${randomBytes(4).toString('hex')}`, otherWorkspaceKey: '' };
  beforeAll(async () => {
    const { endpoints, dataDir } = env();
    Object.assign(process.env, {
      GATEWAY_MODE: 'local',
      GATEWAY_DYNAMODB_ENDPOINT: endpoints.dynamodb,
      GATEWAY_CONTROL_TABLE: controlTable,
      GATEWAY_LOCAL_MASTER_KEY_FILE: path.join(dataDir, 'master.key'),
    });
    resetClients();
    store.workspaceId = await adminWorkspaceId();
    store.otherWorkspaceKey = await createWorkspaceAdminKey(store.otherWorkspaceId);
  });
  afterAll(() => {
    process.env = { ...savedEnv };
    resetClients();
  });
  return store;
}

/** The workspace of the shared gateway's admin key (an owner key: GATEWAY_ADMIN_KEY installs owners). */
export async function adminWorkspaceId(): Promise<string> {
  const response = await gatewayFetch('/api-keys?limit=100');
  const body = await response.json();
  return body.data.find((key: any) => key.role === 'owner').workspace_id;
}

/**
 * There is no workspace route yet: an admin key of another workspace, stored as the key route
 * stores keys. Needs `connectToGatewayStore()`.
 */
export async function createWorkspaceAdminKey(workspaceId: string): Promise<string> {
  const key = generateApiKeySecret();
  await putApiKey(key, { name: 'other workspace admin', role: 'admin', organisation_id: 'org_other', workspace_id: workspaceId });
  return key;
}

/**
 * A JSON caller of the shared gateway (admin key unless `gatewayKey` is given) that asserts no
 * answer contains any of `sentSecrets`, as they are when the answer arrives.
 */
export function secretCheckingCaller(sentSecrets: string[]) {
  return async function call(method: string, urlPath: string, body?: unknown, gatewayKey?: string) {
    const response = await gatewayFetch(urlPath, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...(gatewayKey ? { 'x-gateway-api-key': gatewayKey } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    for (const secret of sentSecrets) expect(text, `${method} ${urlPath} answer`).not.toContain(secret);
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}
