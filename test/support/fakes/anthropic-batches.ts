/**
 * Anthropic's Message Batches as a fake provider serves them (`/messages/batches`): each retrieve
 * moves a batch one state on, `in_progress` then `ended`, with a result per request — a message
 * answering `echo: <last user text>`, or an error for a request whose model is `error-<status>`. A
 * cancel ends the batch with the requests not yet answered `canceled`.
 * @see https://docs.anthropic.com/en/api/creating-message-batches
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

interface FakeMessageBatch {
  id: string;
  requests: { custom_id: string; params: { model: string; messages: { content: unknown }[] } }[];
  processing_status: 'in_progress' | 'canceling' | 'ended';
  looks: number;
  canceled: boolean;
}

const anthropicErrorTypes: Record<number, string> = { 400: 'invalid_request_error', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error' };

export function fakeMessageBatches() {
  const batches = new Map<string, FakeMessageBatch>();
  let next = 0;
  const json = (res: ServerResponse, status: number, value: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));

  const present = (batch: FakeMessageBatch) => {
    const ended = batch.processing_status === 'ended';
    const results = ended ? batch.requests.map((request) => resultOf(batch, request)) : [];
    const count = (type: string) => results.filter((result) => result.result.type === type).length;
    return {
      id: batch.id,
      type: 'message_batch',
      processing_status: batch.processing_status,
      request_counts: {
        processing: ended ? 0 : batch.requests.length,
        succeeded: count('succeeded'),
        errored: count('errored'),
        canceled: count('canceled'),
        expired: count('expired'),
      },
      results_url: ended ? `/v1/messages/batches/${batch.id}/results` : null,
    };
  };

  function resultOf(batch: FakeMessageBatch, request: FakeMessageBatch['requests'][number]) {
    if (batch.canceled) return { custom_id: request.custom_id, result: { type: 'canceled' } };
    const { model, messages } = request.params;
    if (model.startsWith('error-')) {
      const status = Number(model.slice(6));
      const type = anthropicErrorTypes[status] ?? 'api_error';
      return {
        custom_id: request.custom_id,
        result: { type: 'errored', error: { type: 'error', error: { type, message: `The fake provider answered ${status}.` } } },
      };
    }
    const last = messages.at(-1)?.content;
    const text = typeof last === 'string' ? last : JSON.stringify(last);
    const message = {
      id: `msg_fake_${request.custom_id}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: `echo: ${text}` }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 3 },
    };
    return { custom_id: request.custom_id, result: { type: 'succeeded', message } };
  }

  return {
    batches,
    handle(req: IncomingMessage, res: ServerResponse, body: Buffer, pathname: string): boolean {
      const method = req.method ?? 'GET';
      if (/\/messages\/batches$/.test(pathname) && method === 'POST') {
        const { requests } = JSON.parse(body.toString('utf8')) as { requests: FakeMessageBatch['requests'] };
        const batch: FakeMessageBatch = {
          id: `msgbatch_fake${String(++next).padStart(6, '0')}`,
          requests,
          processing_status: 'in_progress',
          looks: 0,
          canceled: false,
        };
        batches.set(batch.id, batch);
        json(res, 200, present(batch));
        return true;
      }
      const match = /\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(pathname);
      if (!match) return false;
      const batch = batches.get(decodeURIComponent(match[1]!));
      if (!batch) return (json(res, 404, { type: 'error', error: { type: 'not_found_error', message: 'No such batch.' } }), true);
      if (match[2] === '/cancel' && method === 'POST') {
        if (batch.processing_status === 'in_progress') {
          batch.processing_status = 'canceling';
          batch.canceled = true;
        }
      } else if (match[2] === '/results' && method === 'GET') {
        if (batch.processing_status !== 'ended')
          return (json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'The batch has not ended.' } }), true);
        res
          .writeHead(200, { 'content-type': 'application/binary' })
          .end(batch.requests.map((request) => `${JSON.stringify(resultOf(batch, request))}\n`).join(''));
        return true;
      } else if (method === 'GET') {
        batch.processing_status = 'ended';
      } else return false;
      json(res, 200, present(batch));
      return true;
    },
  };
}
