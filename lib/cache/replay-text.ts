import { replayMessageAsSseText } from './messages-replay';
import { replayResponseAsSseText } from './responses-replay';
import { replayAsSseText } from './sse-replay';
import type { CapturedOperation } from './stream-capture';

/**
 * A whole answer as the complete event stream its operation streams, as one text: for a cached
 * answer small enough to keep its replay, and for an answer a hook rewrote.
 */
export function replayText(answer: Record<string, unknown>, operation: CapturedOperation, includeUsage: boolean): string {
  if (operation === 'responses') return replayResponseAsSseText(answer);
  if (operation === 'messages') return replayMessageAsSseText(answer);
  return replayAsSseText(answer, operation, { includeUsage });
}
