import middy from '@middy/core';
import { ingestLogEvent, type CloudWatchLogsEvent } from '../lib/observability/log-ingest';

/** CloudWatch Logs subscription → logs table. */
export const handler = middy<CloudWatchLogsEvent, { stored: number; skipped: number }>({ timeoutEarlyInMillis: 0 }).handler(ingestLogEvent);
