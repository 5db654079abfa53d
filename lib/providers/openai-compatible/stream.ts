import { Transform } from 'node:stream';
import { GatewayError } from '../../http/errors';
import { eventData, sseData, sseDone, SseEventSplitter } from '../../http/sse';
import type { TokenUsage } from '../../observability/request-log';
import { readUsage } from './usage';

export interface OpenAIStreamOptions {
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
 */
export function openAIStreamTransform(options: OpenAIStreamOptions): Transform {
  const splitter = new SseEventSplitter();
  const translateFinish = options.finishReasons !== undefined || options.errorFinish !== undefined;
  let failed = false;
  const handle = (event: string, out: Transform) => {
    if (failed) return;
    let data = eventData(event);
    if (data === undefined || data === '[DONE]' || data.charCodeAt(0) !== 123 /* { */) {
      out.push(`${event}\n\n`);
      return;
    }
    // The event as received, until a hook changes its data.
    let relayed: string | undefined = `${event}\n\n`;
    if (options.chunkHook) {
      const hooked = options.chunkHook(data);
      if (hooked === undefined) return;
      if (hooked !== data) {
        data = hooked;
        relayed = undefined;
      }
    }
    const hasUsage = data.includes('"usage"');
    const mapFinish = translateFinish && data.includes('"finish_reason"');
    if (!hasUsage && !mapFinish) {
      out.push(relayed ?? sseData(data));
      return;
    }
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data);
    } catch {
      out.push(relayed ?? sseData(data));
      return;
    }
    const usage = readUsage(chunk);
    if (usage) options.onUsage(usage);
    if (options.dropUsageChunk && usage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return;
    const failure = options.errorFinish && failedFinish(chunk, options.errorFinish.reasons);
    if (failure) {
      // What the chunk carried is still the client's; the failure follows as an error event.
      for (const choice of chunk.choices!) if (choice.finish_reason === failure) choice.finish_reason = null;
      failed = true;
      out.push(sseData(JSON.stringify(chunk)) + sseData(JSON.stringify(finishFailure(options.errorFinish!.provider, failure).toBody())) + sseDone);
      return;
    }
    if (options.finishReasons && mapFinishReasons(chunk, options.finishReasons)) {
      out.push(sseData(JSON.stringify(chunk)));
      return;
    }
    out.push(relayed ?? sseData(data));
  };
  return new Transform({
    readableObjectMode: false,
    transform(chunk: Buffer, _encoding, callback) {
      for (const event of splitter.push(chunk)) handle(event, this);
      callback();
    },
    flush(callback) {
      for (const event of splitter.end()) handle(event, this);
      callback();
    },
  });
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
  return new GatewayError(502, `${provider} stopped generating with finish reason "${reason}"; the answer is incomplete.`, { code: 'provider_error', provider });
}
