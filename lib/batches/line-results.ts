/**
 * The lines of a batch's output and error files, OpenAI's format: `{id, custom_id, response:
 * {status_code, request_id, body}, error}`. An answered request has `error: null`; one the provider
 * or the gateway refused keeps its status and error body in `response`, and its code and message in
 * `error` too, so a reader of either field finds them; one never run has `response: null`.
 */
import { newId } from '../core/ids';
import type { BatchLine } from './batch-input';

export function answeredLine(customId: string, status: number, requestId: string, body: unknown): string {
  return JSON.stringify({ id: newId('batch_req'), custom_id: customId, response: { status_code: status, request_id: requestId, body }, error: null });
}

export function refusedLine(customId: string, status: number, requestId: string, body: unknown, error: { code: string; message: string }): string {
  return JSON.stringify({ id: newId('batch_req'), custom_id: customId, response: { status_code: status, request_id: requestId, body }, error });
}

export function errorLine(customId: string, code: string, message: string): string {
  return JSON.stringify({ id: newId('batch_req'), custom_id: customId, response: null, error: { code, message } });
}

/** A chunk's requests, as the validation wrote them (one JSON object per line). */
export function readChunkRequests(bytes: Buffer): BatchLine[] {
  return bytes
    .toString('utf8')
    .split('\n')
    .filter((text) => text !== '')
    .map((text) => JSON.parse(text) as BatchLine);
}
