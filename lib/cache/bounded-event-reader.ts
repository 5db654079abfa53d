import { SseEventSplitter } from '../wire/sse';

/**
 * Reads an SSE stream event by event for what a cache keeps of it, within a bound: an event that
 * never ends past `limit` bytes, or any failure to read one, gives up on it (`failed`) and lets go
 * of what was held. The bytes themselves are relayed by the caller whatever happens here.
 */
export abstract class BoundedEventReader {
  protected splitter: SseEventSplitter | undefined = new SseEventSplitter();
  protected failed = false;
  /** Bytes received since the last complete event: bounds an event that never ends. */
  private pending = 0;

  constructor(protected readonly limit: number) {}

  push(chunk: Buffer): void {
    if (!this.splitter) return;
    this.pending += chunk.length;
    this.guard(() => {
      const events = this.splitter!.push(chunk);
      if (events.length > 0) this.pending = 0;
      for (const event of events) this.event(event);
      if (this.pending > this.limit) this.fail();
    });
  }

  /** Reads the event the stream ended without a blank line after, and stops reading. */
  protected readRest(): void {
    if (this.splitter) this.guard(() => this.splitter!.end().forEach((event) => this.event(event)));
    this.splitter = undefined;
  }

  protected guard(step: () => void): void {
    try {
      step();
    } catch {
      this.fail();
    }
  }

  /** Gives up on what the stream carries and lets go of what was held. */
  protected fail(): void {
    this.failed = true;
    this.splitter = undefined;
    this.dropHeld();
  }

  /** Lets go of what the reader assembled so far. */
  protected abstract dropHeld(): void;

  protected abstract event(event: string): void;
}
