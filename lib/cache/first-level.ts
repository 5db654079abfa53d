/** What the first level needs of an entry: its size and its absolute expiry. */
export interface Expiring {
  body: Buffer;
  /** Epoch ms. */
  expiresAt: number;
}

/**
 * The in-process first level in front of the shared store. It honours each entry's absolute expiry
 * exactly, and keeps an entry no longer than `freshnessMs` besides, so a force-refresh made by
 * another process is seen here within that time. Bounded by the bytes of the bodies it holds; the
 * oldest entries go first.
 */
export class FirstLevelCache<T extends Expiring> {
  private readonly entries = new Map<string, { entry: T; heldUntil: number }>();
  private bytes = 0;

  constructor(private readonly options: { maxBytes: number; freshnessMs: number }) {}

  get(id: string, now = Date.now()): T | undefined {
    const held = this.entries.get(id);
    if (!held) return undefined;
    if (held.heldUntil > now) return held.entry;
    this.drop(id);
    return undefined;
  }

  set(id: string, entry: T, now = Date.now()): void {
    this.drop(id);
    const size = entry.body.length;
    // One large answer must not empty the level for many small ones.
    if (size > this.options.maxBytes / 8 || entry.expiresAt <= now) return;
    this.entries.set(id, { entry, heldUntil: Math.min(entry.expiresAt, now + this.options.freshnessMs) });
    this.bytes += size;
    for (const oldest of this.entries.keys()) {
      if (this.bytes <= this.options.maxBytes) break;
      this.drop(oldest);
    }
  }

  private drop(id: string): void {
    const held = this.entries.get(id);
    if (!held) return;
    this.entries.delete(id);
    this.bytes -= held.entry.body.length;
  }
}
