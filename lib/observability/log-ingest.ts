import { gunzipSync } from 'node:zlib';
import { requestLogType, type RequestLogRecord } from './request-log';
import { writeLogRecords, type StoredLogLine } from '../store/request-logs';
import { logFilters, rollupAdds } from './log-rollups';

/** The event a CloudWatch Logs subscription delivers to a Lambda function. */
export interface CloudWatchLogsEvent {
  awslogs: { data: string };
}

interface CloudWatchLogsData {
  messageType: 'DATA_MESSAGE' | 'CONTROL_MESSAGE';
  logEvents: Array<{ id: string; timestamp: number; message: string }>;
}

/**
 * Decodes a subscription batch (base64 of gzip of JSON) and stores its request-log records, each
 * with its filter index items and, for inference requests, added into the analytics rollups once.
 */
export async function ingestLogEvent(event: CloudWatchLogsEvent): Promise<{ stored: number; skipped: number }> {
  const data = JSON.parse(gunzipSync(Buffer.from(event.awslogs.data, 'base64')).toString('utf8')) as CloudWatchLogsData;
  if (data.messageType !== 'DATA_MESSAGE') return { stored: 0, skipped: 0 };
  const entries: StoredLogLine[] = [];
  let skipped = 0;
  for (const logEvent of data.logEvents) {
    const entry = parseLine(logEvent.message);
    if (entry) entries.push(entry);
    else skipped++;
  }
  const stored = await writeLogRecords(entries);
  return { stored, skipped: skipped + entries.length - stored };
}

function parseLine(message: string): StoredLogLine | undefined {
  let parsed: any;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  let line = message;
  // With Lambda's JSON log format a line may arrive wrapped in the runtime's envelope.
  if (parsed?.type !== requestLogType && parsed?.message?.type === requestLogType) {
    parsed = parsed.message;
    line = JSON.stringify(parsed);
  }
  if (parsed?.type !== requestLogType || typeof parsed.id !== 'string' || typeof parsed.trace_id !== 'string') return undefined;
  const record = parsed as RequestLogRecord;
  return { record, line, filters: logFilters(record), rollups: rollupAdds(record) };
}
