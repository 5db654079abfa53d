import { listUnfinishedBatches } from '../store/batches';
import { resumeBatch } from './lifecycle';

/**
 * Re-enqueues the work of every unfinished batch: DynamoDB is the source of truth, and queue
 * messages can be lost (the local emulator keeps none across restarts). Returns how many were resumed.
 */
export async function resumeUnfinishedBatches(): Promise<number> {
  const unfinished = await listUnfinishedBatches();
  for (const { workspace_id, id } of unfinished) await resumeBatch(workspace_id, id);
  return unfinished.length;
}
