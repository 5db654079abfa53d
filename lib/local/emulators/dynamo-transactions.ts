/**
 * TransactWriteItems for dynalite, which has no transactions: the local log ingest stores a record
 * and adds it into its rollups in one (lib/store/log-rollups.ts).
 *
 * Transactions run one at a time. Each runs its items as the single-item calls they stand for,
 * handed to dynalite's request handler in this process (no HTTP between the two). Puts conditional
 * on a free key (`attribute_not_exists(pk)`, the only condition the gateway's transactions use) are
 * checked first, all of them, so one that finds its key taken cancels the transaction before
 * anything is written, with DynamoDB's TransactionCanceledException and a reason per item. Then
 * the unconditioned items run together, and the conditioned ones last, in order. A condition of
 * another kind failing after other items were written would leave them written, which DynamoDB
 * never does: the stand-in is not for such transactions.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

const target = 'DynamoDB_20120810.';
const operations = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem' } as const;

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Answers TransactWriteItems on `server` (dynalite's), handing every other call to dynalite. */
export function addTransactions(server: Server): void {
  const [dynalite] = server.listeners('request') as Handler[];
  server.removeAllListeners('request');
  let queue: Promise<unknown> = Promise.resolve();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.headers['x-amz-target'] !== `${target}TransactWriteItems`) return dynalite!(request, response);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const run = () => transact(dynalite!, request.headers, Buffer.concat(chunks).toString('utf8'));
      const answer = queue.then(run, run);
      queue = answer.catch(() => {});
      answer.then(
        ({ status, body }) => {
          response.writeHead(status, { 'content-type': 'application/x-amz-json-1.0' });
          response.end(JSON.stringify(body));
        },
        (error: Error) => {
          response.writeHead(500, { 'content-type': 'application/x-amz-json-1.0' });
          response.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: error.message }));
        },
      );
    });
  });
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function transact(dynalite: Handler, headers: IncomingMessage['headers'], text: string): Promise<Answer> {
  const { TransactItems: items } = JSON.parse(text) as { TransactItems?: Record<string, Record<string, unknown>>[] };
  if (!Array.isArray(items) || items.length === 0 || items.length > 100) return validation('TransactItems must hold 1 to 100 items.');
  const calls: { operation: string; input: Record<string, unknown> }[] = [];
  for (const item of items) {
    const kind = Object.keys(item)[0] as keyof typeof operations;
    if (!(kind in operations)) return validation(`The local DynamoDB stand-in does not run ${kind} in a transaction.`);
    calls.push({ operation: operations[kind], input: item[kind]! });
  }
  const send = (call: (typeof calls)[number]) => callDynalite(dynalite, headers, call.operation, call.input);
  // Puts that need their key free are checked first, all of them: a transaction that stores several
  // records cancels before writing any when one of them is stored already.
  const fresh = calls.filter((call) => call.operation === 'PutItem' && call.input.ConditionExpression === 'attribute_not_exists(pk)');
  const taken = new Set<string>();
  const keyOf = (table: unknown, item: Record<string, { S?: string }>) => JSON.stringify([table, item.pk?.S, item.sk?.S]);
  for (let offset = 0; offset < fresh.length; offset += 100) {
    const byTable = new Map<string, unknown[]>();
    for (const call of fresh.slice(offset, offset + 100)) {
      const item = call.input.Item as Record<string, unknown>;
      byTable.set(String(call.input.TableName), [...(byTable.get(String(call.input.TableName)) ?? []), { pk: item.pk, sk: item.sk }]);
    }
    const requestItems = Object.fromEntries([...byTable].map(([table, keys]) => [table, { Keys: keys, ConsistentRead: true, ProjectionExpression: 'pk, sk' }]));
    const found = await send({ operation: 'BatchGetItem', input: { RequestItems: requestItems } });
    if (found.status !== 200) return found;
    for (const [table, items] of Object.entries((found.body.Responses ?? {}) as Record<string, Record<string, { S?: string }>[]>)) {
      for (const item of items) taken.add(keyOf(table, item));
    }
  }
  const reasons = calls.map((call) =>
    fresh.includes(call) && taken.has(keyOf(call.input.TableName, call.input.Item as Record<string, { S?: string }>))
      ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' }
      : { Code: 'None' },
  );
  if (reasons.some((reason) => reason.Code !== 'None')) return cancelled(reasons);
  // The unconditioned items (rollup additions) go first and the conditioned ones (the records) last:
  // DynamoDB shows a committed transaction's items together, so a reader that finds a record must
  // find what was added with it.
  const answers = await Promise.all(calls.filter((call) => !call.input.ConditionExpression).map(send));
  const failed = answers.find((answer) => answer.status !== 200);
  if (failed) return failed;
  for (const call of calls.filter((other) => other.input.ConditionExpression)) {
    const answer = await send(call);
    if (answer.status === 200) continue;
    if (String(answer.body.__type).endsWith('ConditionalCheckFailedException'))
      return cancelled(
        calls.map((other) => (other === call ? { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed' } : { Code: 'None' })),
      );
    return answer;
  }
  return { status: 200, body: {} };
}

/**
 * One call answered by dynalite's request handler as if it had come over HTTP with the
 * transaction's own credentials: a request that emits the body, a response that keeps the status.
 */
function callDynalite(dynalite: Handler, headers: IncomingMessage['headers'], operation: string, input: unknown): Promise<Answer> {
  return new Promise((resolve) => {
    const request = Object.assign(new EventEmitter(), {
      method: 'POST',
      url: '/',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': target + operation,
        authorization: String(headers.authorization ?? ''),
        'x-amz-date': String(headers['x-amz-date'] ?? ''),
      },
    });
    const response = {
      statusCode: 200,
      contentType: '',
      setHeader: () => undefined,
      end(body?: string) {
        resolve({ status: response.statusCode, body: body ? (JSON.parse(body) as Record<string, unknown>) : {} });
      },
    };
    dynalite(request as unknown as IncomingMessage, response as unknown as ServerResponse);
    request.emit('data', Buffer.from(JSON.stringify(input)));
    request.emit('end');
  });
}

function cancelled(reasons: { Code: string; Message?: string }[]): Answer {
  return {
    status: 400,
    body: {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
      CancellationReasons: reasons,
    },
  };
}

function validation(message: string): Answer {
  return { status: 400, body: { __type: 'com.amazon.coral.validate#ValidationException', message } };
}
