import { Transform } from 'node:stream';
import { eventData, sseData, SseEventSplitter } from '../../http/sse';
import type { TokenUsage } from '../../observability/request-log';
import { readUsage } from './usage';

export interface OpenAIStreamOptions {
  /** Drop the usage-only chunk (`choices: []`) the gateway asked for on the client's behalf. */
  dropUsageChunk: boolean;
  finishReasons?: Record<string, string>;
  onUsage(usage: TokenUsage): void;
}

/**
 * Re-emits an OpenAI-format event stream event by event as it arrives. Events are forwarded as
 * received; only chunks that carry usage or a finish reason needing translation are parsed.
 */
export function openAIStreamTransform(options: OpenAIStreamOptions): Transform {
  const splitter = new SseEventSplitter();
  const handle = (event: string, out: Transform) => {
    const data = eventData(event);
    if (data === undefined || data === '[DONE]' || data.charCodeAt(0) !== 123 /* { */) {
      out.push(`${event}\n\n`);
      return;
    }
    const hasUsage = data.includes('"usage"');
    const mapFinish = options.finishReasons !== undefined && data.includes('"finish_reason"');
    if (!hasUsage && !mapFinish) {
      out.push(`${event}\n\n`);
      return;
    }
    let chunk: any;
    try {
      chunk = JSON.parse(data);
    } catch {
      out.push(`${event}\n\n`);
      return;
    }
    const usage = readUsage(chunk);
    if (usage) options.onUsage(usage);
    if (options.dropUsageChunk && usage && Array.isArray(chunk.choices) && chunk.choices.length === 0) return;
    if (mapFinish && mapFinishReasons(chunk, options.finishReasons!)) {
      out.push(sseData(JSON.stringify(chunk)));
      return;
    }
    out.push(`${event}\n\n`);
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
export function mapFinishReasons(body: { choices?: Array<{ finish_reason?: string | null }> }, reasons: Record<string, string>): boolean {
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
