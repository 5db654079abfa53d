/**
 * Work that must finish before an invocation ends but must not delay the answer (state writes),
 * collected as it is handed over.
 */
export type DeferredWork = Promise<unknown>[];

/**
 * Waits for every piece of deferred work, including work handed over while waiting: writes that
 * start only once a request's log record is complete (after async hooks settle, say).
 */
export async function drain(deferred: DeferredWork): Promise<void> {
  for (let waited = 0; waited < deferred.length; ) {
    const batch = deferred.slice(waited);
    waited = deferred.length;
    await Promise.allSettled(batch);
  }
}
