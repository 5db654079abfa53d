/**
 * A batch's input file, OpenAI's JSONL: one request per line, `{custom_id, method: "POST", url,
 * body}`. Read line by line (a file may be 200 MB), each line checked as the live route checks a
 * request, with errors that name the line (from 1) and the field.
 */
import { GatewayError } from '../core/errors';
import { isPlainObject } from '../core/plain-object';
import { validateInferenceBody } from '../inference/validate';
import type { JsonObject, Operation } from '../providers/types';
import type { BatchErrorEntry } from '../store/batches';

/** The endpoints a batch may run, and the operation each stands for. */
export const batchEndpoints: Record<string, Operation> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completions',
  '/v1/embeddings': 'embeddings',
};

/** OpenAI's limits on an input file. */
export const maxBatchLines = 50_000;
export const maxBatchFileBytes = 200 * 1024 * 1024;
/** A custom_id is the key of a line's idempotency record and of its result. */
export const maxCustomIdLength = 512;
/** The errors a failed batch reports: the first ones found, enough to fix a file's pattern of mistakes. */
export const maxReportedErrors = 100;

/** Lines a provider's batch API cannot take, found when the batch is sent there: the batch fails, naming them. */
export class BatchInputRejected extends Error {
  constructor(readonly errors: BatchErrorEntry[]) {
    super(`${errors.length} lines of the input cannot be sent to the provider.`);
  }
}

export interface BatchLine {
  /** The request's number in the file, from 1 (blank lines are not requests). */
  line: number;
  custom_id: string;
  body: JsonObject;
}

/**
 * Checks a file's lines one at a time. `endpoint` is the batch's (every line's url must equal it);
 * without one (a file checked when uploaded) the lines must agree with each other.
 */
export class BatchInputChecker {
  readonly errors: BatchErrorEntry[] = [];
  private errorCount = 0;
  private readonly customIds = new Map<string, number>();
  private requests = 0;
  private bytes = 0;
  private endpoint: string | undefined;

  constructor(endpoint?: string) {
    this.endpoint = endpoint;
  }

  get requestCount(): number {
    return this.requests;
  }

  /** Checks one line of the file (its number counts every line, blank ones too); the request when it is one. */
  check(text: string, fileLine: number): BatchLine | undefined {
    this.bytes += Buffer.byteLength(text) + 1;
    if (this.bytes > maxBatchFileBytes) {
      if (this.bytes - Buffer.byteLength(text) - 1 <= maxBatchFileBytes)
        this.fail(
          'file_too_large',
          `The input file is larger than ${maxBatchFileBytes / 1024 / 1024} MB, the most a batch takes; split it into several batches.`,
          null,
          fileLine,
        );
      return undefined;
    }
    if (text.trim() === '') return undefined;
    this.requests++;
    if (this.requests === maxBatchLines + 1) {
      this.fail(
        'too_many_requests',
        `The input file has more than ${maxBatchLines} requests, the most a batch takes; split it into several batches.`,
        null,
        fileLine,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return this.fail(
        'invalid_json_line',
        `Line ${fileLine} is not valid JSON (${(error as Error).message}); each line must be one JSON object.`,
        null,
        fileLine,
      );
    }
    if (!isPlainObject(parsed)) return this.fail('invalid_request', `Line ${fileLine} must be a JSON object {custom_id, method, url, body}.`, null, fileLine);
    const { custom_id, method, url, body } = parsed;
    if (typeof custom_id !== 'string' || custom_id.length === 0 || custom_id.length > maxCustomIdLength) {
      return this.fail('invalid_custom_id', `Line ${fileLine}: custom_id must be a string of 1 to ${maxCustomIdLength} characters.`, 'custom_id', fileLine);
    }
    const earlier = this.customIds.get(custom_id);
    if (earlier !== undefined) {
      return this.fail(
        'duplicate_custom_id',
        `Line ${fileLine}: custom_id ${JSON.stringify(custom_id)} is used on line ${earlier} already; each must be unique in the file.`,
        'custom_id',
        fileLine,
      );
    }
    this.customIds.set(custom_id, fileLine);
    if (method !== 'POST') return this.fail('invalid_method', `Line ${fileLine}: method must be "POST".`, 'method', fileLine);
    if (typeof url !== 'string' || !(url in batchEndpoints)) {
      return this.fail('invalid_url', `Line ${fileLine}: url must be one of ${Object.keys(batchEndpoints).join(', ')}.`, 'url', fileLine);
    }
    this.endpoint ??= url;
    if (url !== this.endpoint) {
      return this.fail(
        'mismatched_url',
        `Line ${fileLine}: url is ${url}, but the batch's endpoint is ${this.endpoint}; every line must use it.`,
        'url',
        fileLine,
      );
    }
    if (!isPlainObject(body)) return this.fail('invalid_body', `Line ${fileLine}: body must be the request's JSON object.`, 'body', fileLine);
    if (body.stream === true)
      return this.fail('invalid_body', `Line ${fileLine}: body.stream cannot be true; a batch's answers are written whole.`, 'body.stream', fileLine);
    try {
      validateInferenceBody(batchEndpoints[url]!, body);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      return this.fail(error.code ?? 'invalid_body', `Line ${fileLine}: ${error.message}`, error.param ? `body.${error.param}` : 'body', fileLine);
    }
    return { line: this.requests, custom_id, body: body as JsonObject };
  }

  /** Checks what only the whole file shows; the errors found, none when the file is valid. */
  finish(): BatchErrorEntry[] {
    if (this.requests === 0 && this.errorCount === 0) this.fail('empty_file', 'The input file has no requests; each line must be one request.', null, null);
    return this.errors;
  }

  private fail(code: string, message: string, param: string | null, line: number | null): undefined {
    this.errorCount++;
    if (this.errors.length < maxReportedErrors) this.errors.push({ code, message, param, line });
    return undefined;
  }
}
