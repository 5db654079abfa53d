/**
 * Runs one chunk of a batch's lines, as the chunk worker's invocation allows: under the chunk's
 * lease, the lines without a result, a few at a time, each through the same core as a live request
 * (`runInference`). Each result is written once and counted once (batch-work.ts). A line answered
 * 429, by the provider or by a rate-limit policy, is run again later within the window rather than
 * failed; so are the lines left when the invocation's time runs short: the chunk goes back on the
 * queue with what is left.
 */
import { randomUUID } from 'node:crypto';
import { readBody } from '../core/read-body';
import { GatewayError } from '../core/errors';
import { inferenceRequest } from '../inference/inference-request';
import { inferenceContext, runInference } from '../inference/run-inference';
import { retryAfterMs } from '../routing/retry-policy';
import { getBatchItem, type BatchItem } from '../store/batches';
import type { EncryptedBlob } from '../secrets/envelope';
import {
  type ChunkState,
  claimChunk,
  countLine,
  countLines,
  type LineResult,
  linesWithResults,
  listChunks,
  putLineResults,
  readChunkLines,
  releaseChunk,
  renewChunkLease,
} from '../store/batch-work';
import { batchEndpoints, type BatchLine } from './batch-input';
import { sendChunks, sendLifecycle } from '../store/batch-queue';
import { workExpiresAt } from './lifecycle';
import { answeredLine, readChunkRequests, refusedLine } from './line-results';
import { openLineOptions, type LineOptions } from '../provider-jobs/sealed-options';

export interface ChunkInvocation {
  workspaceId: string;
  batchId: string;
  chunk: number;
  /** Milliseconds left in the invocation (Lambda's `getRemainingTimeInMillis`). */
  remainingMs(): number;
}

/** Lines of one chunk in flight at once. */
export function lineConcurrency(): number {
  const configured = Number(process.env.GATEWAY_BATCH_LINE_CONCURRENCY);
  return Number.isInteger(configured) && configured > 0 ? configured : 8;
}

/**
 * How long a chunk's lease lasts without renewal: how soon another worker takes over the chunk of
 * one that died. A live worker renews it every third of that.
 */
export function leaseMs(): number {
  const configured = Number(process.env.GATEWAY_BATCH_LEASE_SECONDS);
  return (Number.isFinite(configured) && configured > 0 ? configured : 120) * 1000;
}

/** Time kept back at the end of an invocation: no line starts in it, so the lines under way end and the chunk is handed on. */
const reserveMs = () => Math.min(60_000, leaseMs());
/** Finished lines are written and counted in groups of at most this many (BatchWriteItem's limit), */
const maxGroup = 25;
/** or after this long. */
const maxGroupWaitMs = 200;
/** A line answered 429 without a retry-after is tried again this much later. */
const defaultRetrySeconds = 30;
/** How often a running chunk looks whether its batch was cancelled. */
const statusCheckMs = 1_000;
/** The body of an answer a line may keep (a provider's whole answer is read up to this). */
const maxAnswerBytes = 32 * 1024 * 1024;

type LineOutcome = { result: { ok: boolean; text: string } } | { retryAfterSeconds: number };

export async function runChunk(invocation: ChunkInvocation): Promise<void> {
  const { workspaceId, batchId, chunk } = invocation;
  const batch = await getBatchItem(workspaceId, batchId);
  if (!batch) return;
  if (batch.status !== 'validating' && batch.status !== 'in_progress') {
    if (batch.status === 'cancelling') await sendLifecycle({ kind: 'settle', workspace_id: workspaceId, batch_id: batchId });
    return;
  }
  if (Date.now() / 1000 >= batch.expires_at) return sendLifecycle({ kind: 'settle', workspace_id: workspaceId, batch_id: batchId });
  const sealed = batch.sealed_options;
  if (!sealed) return; // the batch ended meanwhile
  const owner = randomUUID();
  const claim = await claimChunk(workspaceId, batchId, chunk, owner, leaseMs());
  if (!claim) return; // finished
  if ('heldUntil' in claim) {
    // Another worker runs it (a second delivery), or died holding it: look again once its lease
    // has run out, which finds the chunk finished or takes it over.
    await sendChunks([{ kind: 'chunk', workspace_id: workspaceId, batch_id: batchId, chunk }], (claim.heldUntil - Date.now()) / 1000 + 1);
    return;
  }
  const lease = new LeaseKeeper(() => renewChunkLease(workspaceId, batchId, chunk, owner, leaseMs()));
  try {
    await runClaimedChunk(batch, sealed as unknown as EncryptedBlob, claim.state, owner, invocation, lease);
  } catch (error) {
    // A worker that is still alive gives its lease back, so the message's next delivery need not wait for it to run out.
    lease.stop();
    await releaseChunk(workspaceId, batchId, chunk, owner, false).catch(() => undefined);
    throw error;
  } finally {
    lease.stop();
  }
}

async function runClaimedChunk(
  batch: BatchItem,
  sealed: EncryptedBlob,
  state: ChunkState,
  owner: string,
  invocation: ChunkInvocation,
  lease: LeaseKeeper,
): Promise<void> {
  const { workspaceId, batchId, chunk } = invocation;
  const requests = readChunkRequests(await readChunkLines(workspaceId, batchId, chunk));
  const results = await linesWithResults(workspaceId, batchId, state.first, state.first + state.lines - 1);
  // A worker that died between writing a result and counting it left the count to the next one.
  for (const [line, ok] of results) if (!state.done.has(line)) await countLine(workspaceId, batchId, chunk, line, ok);
  const todo = requests.filter((request) => !results.has(request.line));

  const lineOptions = await openLineOptions(workspaceId, sealed);
  const stop = new StopSignal(batch, invocation, lease);
  const finished = new FinishedLines(workspaceId, batchId, chunk, workExpiresAt(batch));
  let retryAfterSeconds = 0;
  const left: BatchLine[] = [];
  let next = 0;
  const runner = async () => {
    while (next < todo.length) {
      const request = todo[next++]!;
      if (await stop.shouldStop()) {
        left.push(request);
        continue;
      }
      const outcome = await runLine(batch, lineOptions, request);
      if ('retryAfterSeconds' in outcome) {
        retryAfterSeconds = Math.max(retryAfterSeconds, outcome.retryAfterSeconds);
        left.push(request);
        continue;
      }
      await finished.add({ line: request.line, custom_id: request.custom_id, ...outcome.result });
    }
  };
  // One runner's failure stops the others taking lines before the error ends the invocation.
  const runners = await Promise.allSettled(
    Array.from({ length: Math.min(lineConcurrency(), todo.length) }, () =>
      runner().catch((error: unknown) => {
        stop.reason = 'failed';
        throw error;
      }),
    ),
  );
  for (const outcome of runners) if (outcome.status === 'rejected') throw outcome.reason;
  await finished.flush();
  lease.stop();
  // A worker whose lease was taken over leaves the chunk to the one that took it.
  if (lease.lost) return;

  if (left.length === 0) {
    await releaseChunk(workspaceId, batchId, chunk, owner, true);
    // The chunk that finishes last settles the batch; each finishing chunk looks.
    const chunks = await listChunks(workspaceId, batchId);
    if (chunks.every((candidate) => candidate.finished)) await sendLifecycle({ kind: 'settle', workspace_id: workspaceId, batch_id: batchId });
    return;
  }
  await releaseChunk(workspaceId, batchId, chunk, owner, false);
  if (stop.reason === 'ended') await sendLifecycle({ kind: 'settle', workspace_id: workspaceId, batch_id: batchId });
  else await sendChunks([{ kind: 'chunk', workspace_id: workspaceId, batch_id: batchId, chunk }], retryAfterSeconds);
}

/** Whether the chunk must stop taking lines: its invocation's time is short, or its batch was cancelled or ran out of time. */
class StopSignal {
  reason: 'time' | 'ended' | 'lost' | 'failed' | undefined;
  private checkedAt = Date.now();
  private checking: Promise<void> | undefined;
  private expiresAt: number;

  constructor(
    private readonly batch: BatchItem,
    private readonly invocation: ChunkInvocation,
    private readonly lease: LeaseKeeper,
  ) {
    this.expiresAt = batch.expires_at;
  }

  async shouldStop(): Promise<boolean> {
    if (this.reason) return true;
    if (this.lease.lost) this.reason = 'lost';
    else if (this.invocation.remainingMs() < reserveMs()) this.reason = 'time';
    else if (Date.now() / 1000 >= this.expiresAt) this.reason = 'ended';
    else if (Date.now() - this.checkedAt >= statusCheckMs) {
      this.checking ??= getBatchItem(this.batch.workspace_id, this.batch.id).then((now) => {
        this.checkedAt = Date.now();
        this.checking = undefined;
        if (!now || (now.status !== 'in_progress' && now.status !== 'validating') || Date.now() / 1000 >= now.expires_at) this.reason = 'ended';
        else this.expiresAt = now.expires_at;
      });
      await this.checking;
    }
    return this.reason !== undefined;
  }
}

/** One line through the core, as a live request with the batch's options would run. */
async function runLine(batch: BatchItem, lineOptions: LineOptions, line: BatchLine): Promise<LineOutcome> {
  const requestId = `${batch.id}-${line.line}`;
  let context: ReturnType<typeof inferenceContext> | undefined;
  let status: number;
  let outcome: LineOutcome;
  try {
    const request = inferenceRequest({
      kind: 'unified',
      operation: batchEndpoints[batch.endpoint]!,
      body: line.body,
      caller: { organisationId: batch.organisation_id, workspaceId: batch.workspace_id, keyId: batch.key_id },
      options: lineOptions.options,
      headers: lineOptions.headers,
      metadata: { ...batch.line_metadata, batch_id: batch.id, custom_id: line.custom_id },
    });
    context = inferenceContext(request);
    const result = await runInference(context);
    status = result.outcome.status;
    const providerRequestId = result.outcome.headers['x-request-id'] ?? requestId;
    if (result.outcome.ok) {
      const { body } = result.outcome;
      const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.isBuffer(body) ? body : await readBody(body, maxAnswerBytes, 'The answer');
      outcome = { result: { ok: true, text: answeredLine(line.custom_id, status, providerRequestId, JSON.parse(bytes.toString('utf8'))) } };
    } else {
      outcome = refusal(line, result.outcome.error, providerRequestId, result.outcome.raw, result.outcome.headers);
    }
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    status = error.status;
    outcome = refusal(line, error, requestId);
  }
  // Every line's record is under the batch's id as its trace: GET /v1/logs/{batch id} lists them.
  await context?.finish({ status, requestId: line.custom_id, traceId: batch.id });
  return outcome;
}

function refusal(line: BatchLine, error: GatewayError, requestId: string, raw?: Buffer, answerHeaders: Record<string, string> = {}): LineOutcome {
  if (error.status === 429) {
    // A rate-limit policy's refusal says when in its own headers; a provider's, in its answer's.
    const waitMs = retryAfterMs({ ...answerHeaders, ...error.headers });
    return { retryAfterSeconds: waitMs === undefined ? defaultRetrySeconds : Math.max(1, Math.ceil(waitMs / 1000)) };
  }
  let body: unknown = error.toBody();
  if (raw) {
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      // Not JSON: the gateway's own description of the error stands.
    }
  }
  return {
    result: { ok: false, text: refusedLine(line.custom_id, error.status, requestId, body, { code: error.code ?? 'request_failed', message: error.message }) },
  };
}

/** Renews a chunk's lease while its lines run; says when a renewal found the lease gone. */
class LeaseKeeper {
  lost = false;
  private readonly timer: NodeJS.Timeout;

  constructor(renew: () => Promise<boolean>) {
    this.timer = setInterval(() => {
      renew().then(
        (held) => {
          if (!held) this.lost = true;
        },
        // A renewal that fails is tried again at the next tick; the lease has two more ticks to run.
        () => undefined,
      );
    }, leaseMs() / 3);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/**
 * The results of a chunk's finished lines, written and counted a group at a time (at most 25, or
 * every 200 ms): two writes per group rather than two per line. A worker that dies between the two
 * leaves results uncounted, which the next worker counts when it claims the chunk.
 */
class FinishedLines {
  private pending: LineResult[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly workspaceId: string,
    private readonly batchId: string,
    private readonly chunk: number,
    private readonly expiresAt: number,
  ) {}

  async add(result: LineResult): Promise<void> {
    this.pending.push(result);
    if (this.pending.length >= maxGroup) await this.flush();
    else this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), maxGroupWaitMs);
  }

  /** Writes what is pending, after any write under way (groups are written one at a time). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const group = this.pending.splice(0);
    this.flushing = this.flushing.then(() => this.write(group));
    return this.flushing;
  }

  private async write(group: LineResult[]): Promise<void> {
    if (group.length === 0) return;
    await putLineResults(this.workspaceId, this.batchId, group, this.expiresAt);
    if (await countLines(this.workspaceId, this.batchId, this.chunk, group)) return;
    // One of them was counted already (a worker whose lease ran out finished it too): one by one.
    for (const result of group) await countLine(this.workspaceId, this.batchId, this.chunk, result.line, result.ok);
  }
}
