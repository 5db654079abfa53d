/**
 * Fills a semantic cache scope in bulk: the items `putSemanticEntry` would write (the store's own
 * `semanticEntryItems`), sent with the store's own batch writer, but several entries to a batch and
 * several batches in flight. One entry at a time, as the gateway stores them, a 100,000-entry
 * scope (a million items) would take the emulator far longer than the lookups it is filled for.
 */
import { semanticEntryItems, type SemanticEntry } from '../../lib/store/semantic-entries';
import { writeInBatches } from '../../lib/store/batch-write';
import { tables } from '../../lib/store/tables';

export interface FillRange {
  workspaceId: string;
  scope: string;
  /** Entry indexes [from, to) are written. */
  from: number;
  to: number;
  /** The entry at an index; called once per index, in index order. */
  entry: (index: number) => SemanticEntry;
  /** BatchWriteItem calls in flight; the emulator stops getting faster at a few. */
  concurrency?: number;
  /** Called with the count of entries written so far, after each chunk. */
  progress?: (written: number) => void;
}

/**
 * Five entries are fifty items: two full batches of 25 (BatchWriteItem's limit), so no call goes
 * out half empty.
 */
const entriesPerChunk = 5;

export async function fillScope({ workspaceId, scope, from, to, entry, concurrency = 8, progress }: FillRange): Promise<void> {
  let next = from;
  let written = 0;
  const worker = async () => {
    while (next < to) {
      const start = next;
      const end = Math.min(to, start + entriesPerChunk);
      next = end;
      // Drawn before the await, so entries are made in index order whichever worker takes them.
      const requests = [];
      for (let index = start; index < end; index++) {
        for (const Item of semanticEntryItems(workspaceId, scope, entry(index))) requests.push({ PutRequest: { Item } });
      }
      await writeInBatches(tables.state, requests, 'benchmark semantic cache items');
      written += end - start;
      progress?.(written);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
