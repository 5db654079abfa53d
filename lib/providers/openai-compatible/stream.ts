import { Transform } from 'node:stream';
import { GatewayError } from '../../core/errors';
import { eventData, sseData, sseDone, SseEventSplitter } from '../../wire/sse';
import type { TokenUsage } from '../../core/usage';
import { readUsage } from './usage';

export interface OpenAIStreamOptions {
  /** Names the provider in the error event of a stream that ends unfinished. */
  provider: string;
  /** Drop the usage-only chunk (`choices: []`) the gateway asked for on the client's behalf. */
  dropUsageChunk: boolean;
  finishReasons?: Record<string, string>;
  /** Finish reasons that end the stream with an error event instead (see the provider row). */
  errorFinish?: { provider: string; reasons: readonly string[] };
  /** Sees each JSON chunk's data first: the data to relay, or undefined to drop the event. */
  chunkHook?: (data: string) => string | undefined;
  onUsage(usage: TokenUsage): void;
}

type Chunk = { choices?: Array<{ finish_reason?: string | null }>; usage?: unknown };

/**
 * Re-emits an OpenAI-format event stream event by event as it arrives. Events are forwarded as
 * received; only chunks that carry usage or a finish reason needing translation are parsed.
 *
 * The client always gets `[DONE]` last: a provider that closes its stream without one after a
 * finish reason gets it added; one that closes before any finish reason cut the answer short, so an
 * error event says so first.
 */
export function openAIStreamTransform(options: OpenAIStreamOptions): Transform {
  const splitter = new SseEventSplitter();
  const translateFinish = options.finishReasons !== undefined || options.errorFinish !== undefined;
  let failed = false;
  let sawDone = false;
  let sawFinish = false;
  /** The SSE text to relay for one event: the event as received, a rewritten one, or '' (dropped). */
  const handle = (event: string): { text: string; asReceived: boolean } => {
    const asReceived = { text: `${event}\n\n`, asReceived: true };
    if (failed) return { text: '', asReceived: false };
    let data = eventData(event);
    if (data === '[DONE]') sawDone = true;
    if (data === undefined || sawDone || data.charCodeAt(0) !== 123 /* { */) return asReceived;
    if (!sawFinish && finishReasonSet.test(data)) sawFinish = true;
    let hooked = false;
    if (options.chunkHook) {
      const replaced = options.chunkHook(data);
      if (replaced === undefined) return { text: '', asReceived: false };
      if (replaced !== data) {
        data = replaced;
        hooked = true;
      }
    }
    const relayed = () => (hooked ? { text: sseData(data!), asReceived: false } : asReceived);
    const hasUsage = data.includes('"usage"');
    const mapFinish = translateFinish && data.includes('"finish_reason"');
    if (!hasUsage && !mapFinish) return relayed();
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      return relayed();
    }
    const usage = readUsage(chunk);
    if (usage) options.onUsage(usage);
    if (options.dropUsageChunk && usage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return { text: '', asReceived: false };
    const failure = options.errorFinish && failedFinish(chunk, options.errorFinish.reasons);
    if (failure) {
      // What the chunk carried is still the client's; the failure follows as an error event.
      for (const choice of chunk.choices!) if (choice.finish_reason === failure) choice.finish_reason = null;
      failed = true;
      const error = finishFailure(options.errorFinish!.provider, failure).toBody();
      return { text: sseData(JSON.stringify(chunk)) + sseData(JSON.stringify(error)) + sseDone, asReceived: false };
    }
    if (options.finishReasons && mapFinishReasons(chunk, options.finishReasons)) return { text: sseData(JSON.stringify(chunk)), asReceived: false };
    return relayed();
  };
  const relay = (events: string[], out: Transform, original?: Buffer) => {
    let text = '';
    let verbatim = original !== undefined;
    for (const event of events) {
      const result = handle(event);
      text += result.text;
      if (!result.asReceived) verbatim = false;
    }
    // A read that held whole events only, all relayed as received, goes out as the same bytes.
    if (verbatim && events.length > 0) out.push(original);
    else if (text) out.push(text);
  };
  return new Transform({
    readableObjectMode: false,
    transform(chunk: Buffer, _encoding, callback) {
      const startsClean = splitter.isEmpty();
      const events = splitter.push(chunk);
      relay(events, this, startsClean && endsWithBlankLine(chunk) ? chunk : undefined);
      callback();
    },
    flush(callback) {
      relay(splitter.end(), this);
      if (!failed && !sawDone) this.push(sawFinish ? sseDone : sseData(JSON.stringify(unfinishedStream(options.provider).toBody())) + sseDone);
      callback();
    },
  });
}

/** A chunk with a finish reason that is not null: the answer is complete. */
const finishReasonSet = /"finish_reason"\s*:\s*"/;

function unfinishedStream(provider: string): GatewayError {
  return new GatewayError(502, `${provider} closed its stream before the answer finished (no finish reason, no [DONE]); the answer is incomplete.`, {
    code: 'provider_stream_error',
    provider,
  });
}

function endsWithBlankLine(chunk: Buffer): boolean {
  const n = chunk.length;
  return n >= 2 && chunk[n - 1] === 10 && (chunk[n - 2] === 10 || (n >= 4 && chunk[n - 2] === 13 && chunk[n - 3] === 10 && chunk[n - 4] === 13));
}

/** Replaces provider-specific finish reasons in place; true when something changed. */
export function mapFinishReasons(body: Chunk, reasons: Record<string, string>): boolean {
  let changed = false;
  for (const choice of body.choices ?? []) {
    const mapped = choice.finish_reason ? reasons[choice.finish_reason] : undefined;
    if (mapped) {
      choice.finish_reason = mapped;
      changed = true;
    }
  }
  return changed;
}

/** The first choice's finish reason that means the provider failed, if any. */
export function failedFinish(body: Chunk, reasons: readonly string[]): string | undefined {
  for (const choice of body.choices ?? []) {
    if (choice.finish_reason && reasons.includes(choice.finish_reason)) return choice.finish_reason;
  }
  return undefined;
}

export function finishFailure(provider: string, reason: string): GatewayError {
  return new GatewayError(502, `${provider} stopped generating with finish reason "${reason}"; the answer is incomplete.`, {
    code: 'provider_error',
    provider,
  });
}
