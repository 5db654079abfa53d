import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * Lowers this process's CPU priority (every thread's, where the system lists them), for the local
 * stand-ins of work that never shares the serving function's CPU on AWS: log ingestion (a separate
 * function fed by CloudWatch) and the DynamoDB/SQS/S3 emulators (managed services). On a machine
 * with few cores they then yield to the gateway instead of stretching its latency by whole
 * scheduler slices; they still get every cycle the gateway leaves. Best effort: a system that
 * refuses is left as it is.
 */
export function yieldCpuToServing(niceness = 10): void {
  let threads: number[] = [];
  try {
    // Linux keeps a priority per thread: the libuv pool and V8's helpers run apart from the main thread.
    threads = readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
  } catch {
    threads = [];
  }
  for (const id of threads.length > 0 ? threads : [0]) {
    try {
      setPriority(id, niceness);
    } catch {
      // Not allowed here (or the thread is gone): nothing to do.
    }
  }
}
