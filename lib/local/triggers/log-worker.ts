import '../sdk-node-notice';
import { setPriority } from 'node:os';
import { pathToFileURL } from 'node:url';
import { stopSignals } from '../stop-when-told';
import { subscriptionEvent, type LogWorkerReply, type LogWorkerRequest } from './log-delivery';

/**
 * The local stand-in for CloudWatch Logs and the log-ingest Lambda: a process of its own (as on AWS,
 * ingestion never runs on the serving function's CPU) that receives batches of request-log lines
 * from the gateway process and hands them to the `logIngest` bundle in the subscription format.
 * Started by the local runtime with the same environment as the handlers. A batch is answered only
 * once the handler has returned, that is once its records are written: until then the sink keeps
 * the batch and sends it again to the next worker should this one die.
 */
async function main(): Promise<void> {
  const [bundle, logGroup] = process.argv.slice(2);
  yieldToServing();
  const { handler } = (await import(pathToFileURL(bundle).href)) as { handler: (event: unknown, context: unknown) => Promise<unknown> };
  const context = { functionName: 'logIngest', getRemainingTimeInMillis: () => 60_000 };
  let sequence = 0;
  let queue = Promise.resolve();
  // A reply that cannot go out (the gateway has gone, or is stopping the worker) is dropped rather
  // than thrown: the sink sends an unanswered batch to the next worker, and records are stored by id.
  const reply = (message: LogWorkerReply) => {
    if (process.connected) process.send?.(message, undefined, {}, () => undefined);
  };
  process.on('message', (request: LogWorkerRequest) => {
    queue = queue.then(async () => {
      try {
        await handler(subscriptionEvent(request.lines, logGroup, sequence + 1), context);
        sequence += request.lines.length;
        reply({ id: request.id, ok: true });
      } catch (error) {
        reply({ id: request.id, ok: false, error: (error as Error).message });
      }
    });
  });
  // Exits with the gateway: the IPC channel closes when the parent goes away.
  process.on('disconnect', () => void queue.then(() => process.exit(0)));
  // Told to stop, the worker passes it on to the gateway, which stops in order: its lines go to
  // this worker first, then it closes the channel (above). Dying here instead would drop the
  // batches under way and have the gateway start another worker. Without a gateway to tell, the
  // worker exits once its queue is done.
  for (const signal of stopSignals)
    process.on(signal, () => {
      if (process.connected) reply({ signal });
      else void queue.then(() => process.exit(0));
    });
  reply({ ready: true });
}

/**
 * `GATEWAY_LOG_WORKER_NICE` (0–19, default 0) lowers the worker's CPU priority: storing logs then
 * gives way to serving requests, as on AWS, where ingestion runs on other machines. At a low
 * priority the worker falls behind under a burst and catches up after (the sink holds the lines);
 * budgets, which log ingestion adds up, lag by as much.
 */
function yieldToServing(): void {
  const text = process.env.GATEWAY_LOG_WORKER_NICE;
  if (!text) return;
  const niceness = Number(text);
  if (!Number.isInteger(niceness) || niceness < 0 || niceness > 19) {
    console.error(`GATEWAY_LOG_WORKER_NICE must be a whole number from 0 to 19, got '${text}'; the log worker keeps the gateway's priority.`);
    return;
  }
  try {
    setPriority(niceness);
  } catch (error) {
    console.error(`The log worker could not lower its priority: ${(error as Error).message}`);
  }
}

main().catch((error) => {
  console.error('Log worker failed to start', error);
  process.exit(1);
});
