/**
 * The background responses worker, run in this process on the shared gateway's store as the
 * Lambda would run it: a message delivered again, twice at once, or after a worker died half-way
 * runs the response exactly once, and the stored response reads as the API shows it.
 */
import { beforeAll, afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/core/ids';
import { sealLineOptions } from '../../lib/provider-jobs/sealed-options';
import { runBackgroundResponse } from '../../lib/responses/background';
import { inputItems } from '../../lib/responses/input-items';
import { baseResponse } from '../../lib/providers/responses-format/response-object';
import type { ResponsesRequest } from '../../lib/providers/responses-format/types';
import { resetClients } from '../../lib/store/clients';
import { claimStoredResponse, putStoredResponse } from '../../lib/store/responses';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, openaiClient } from '../support/gateway-client';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';

const store = connectToGatewayStore();
let upstream: FakeUpstream;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  Object.assign(process.env, {
    GATEWAY_STATE_TABLE: stateTable,
    GATEWAY_S3_ENDPOINT: env().endpoints.s3,
    GATEWAY_BUCKET: 'llm-gateway-local-000000000000-data',
  });
  resetClients();
});
afterAll(() => upstream.close());

/** A background response stored queued, as the create route stores it, but not sent to the queue. */
async function queuedResponse(text: string): Promise<string> {
  const request: ResponsesRequest = { model: 'gpt-4o-mini', input: text, background: true };
  const response = baseResponse(request, { id: newId('resp'), createdAt: Math.floor(Date.now() / 1000), status: 'queued' });
  const sealed = await sealLineOptions(store.workspaceId, {
    options: {
      config: { kind: 'headers' },
      credentials: { provider: 'openai', apiKey: 'sk-worker', customHost: `${upstream.url}/v1` },
      forwardHeaderNames: [],
      cache: { forceRefresh: false },
    },
    headers: {},
  });
  await putStoredResponse(
    store.workspaceId,
    {
      response,
      input: inputItems(request),
      history: [],
      run: { request, caller: { organisationId: 'org_local', workspaceId: store.workspaceId }, metadata: {} },
    },
    JSON.stringify(sealed),
  );
  return response.id;
}

const providerCalls = (text: string) => upstream.requests.filter((request) => JSON.stringify(request.json ?? '').includes(text)).length;

describe('the background responses worker', () => {
  it('runs a response once however often, and however concurrently, its message is delivered', async () => {
    const id = await queuedResponse('deliver me twice');
    await Promise.all([runBackgroundResponse(store.workspaceId, id), runBackgroundResponse(store.workspaceId, id)]);
    await runBackgroundResponse(store.workspaceId, id);
    expect(providerCalls('deliver me twice')).toBe(1);
    expect(await openaiClient().responses.retrieve(id)).toMatchObject({ status: 'completed', output_text: 'echo: deliver me twice (turn 1)' });
  });

  it('finishes a response whose worker died half-way, once its lease has run out', async () => {
    const id = await queuedResponse('the first worker died');
    // A worker claimed it and died: its lease has run out, and the run never wrote its end.
    expect(await claimStoredResponse(store.workspaceId, id, -1)).toBeDefined();
    expect((await openaiClient().responses.retrieve(id)).status).toBe('in_progress');
    await runBackgroundResponse(store.workspaceId, id);
    expect(await openaiClient().responses.retrieve(id)).toMatchObject({ status: 'completed', output_text: 'echo: the first worker died (turn 1)' });
    expect(providerCalls('the first worker died')).toBe(1);
  });

  it('leaves a response that a live worker holds to that worker', async () => {
    const id = await queuedResponse('held by another');
    expect(await claimStoredResponse(store.workspaceId, id, 600)).toBeDefined();
    await runBackgroundResponse(store.workspaceId, id);
    expect(providerCalls('held by another')).toBe(0);
    expect((await openaiClient().responses.retrieve(id)).status).toBe('in_progress');
  });
});
