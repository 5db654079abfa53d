import { gzipSync } from 'node:zlib';

/** What a log sink hands the ingest handler: a batch as a CloudWatch Logs subscription delivers it. */
export function subscriptionEvent(lines: string[], logGroup: string, firstSequence: number): { awslogs: { data: string } } {
  const now = Date.now();
  const payload = {
    messageType: 'DATA_MESSAGE',
    owner: '000000000000',
    logGroup,
    logStream: 'local',
    subscriptionFilters: ['request-logs'],
    logEvents: lines.map((message, index) => ({ id: String(firstSequence + index), timestamp: now, message })),
  };
  // Level 1: the format CloudWatch delivers, at a fraction of the default level's CPU.
  return { awslogs: { data: gzipSync(JSON.stringify(payload), { level: 1 }).toString('base64') } };
}

/**
 * Messages between the gateway process and its log worker. A reply acknowledges one batch: `ok`
 * once its records are stored, or the error that made ingestion give it up. `signal`: the worker
 * was told to stop, which the gateway takes as told to itself.
 */
export type LogWorkerRequest = { id: number; lines: string[] };
export type LogWorkerReply = { id: number; ok: boolean; error?: string } | { ready: true } | { signal: NodeJS.Signals };
