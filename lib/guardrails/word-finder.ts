/**
 * Which of a list of words (or phrases) occur in a text, in one pass over the text whatever the
 * list holds (Aho–Corasick). Searching the text once per word costs words × text: a thousand
 * words over a megabyte took seconds when every word almost matched everywhere.
 */
export class WordFinder {
  /** Child of a node by code unit, keyed `node * 65536 + code`. */
  private readonly children = new Map<number, number>();
  /** Longest proper suffix of a node's path that is also a path. */
  private readonly fallback: number[] = [0];
  /** Nearest node along the fallback chain (itself excluded) where a word ends; -1 for none. */
  private readonly nextEnding: number[] = [-1];
  /** Indexes of the words that end at a node. */
  private readonly endings: number[][] = [[]];

  constructor(private readonly words: readonly string[]) {
    words.forEach((word, index) => {
      let node = 0;
      for (let i = 0; i < word.length; i++) {
        const key = node * 65536 + word.charCodeAt(i);
        let child = this.children.get(key);
        if (child === undefined) {
          child = this.endings.push([]) - 1;
          this.fallback.push(0);
          this.nextEnding.push(-1);
          this.children.set(key, child);
        }
        node = child;
      }
      this.endings[node]!.push(index);
    });
    this.linkFallbacks();
  }

  private linkFallbacks(): void {
    const childrenOf = new Map<number, [number, number][]>();
    for (const [key, child] of this.children) {
      const parent = Math.floor(key / 65536);
      let list = childrenOf.get(parent);
      if (!list) childrenOf.set(parent, (list = []));
      list.push([key % 65536, child]);
    }
    // Breadth first, so every shorter path is linked before the longer ones that fall back to it.
    const queue = [0];
    for (let head = 0; head < queue.length; head++) {
      const parent = queue[head]!;
      for (const [code, child] of childrenOf.get(parent) ?? []) {
        queue.push(child);
        if (parent !== 0) this.fallback[child] = this.step(this.fallback[parent]!, code);
        const target = this.fallback[child]!;
        this.nextEnding[child] = this.endings[target]!.length > 0 ? target : this.nextEnding[target]!;
      }
    }
  }

  private step(node: number, code: number): number {
    for (;;) {
      const child = this.children.get(node * 65536 + code);
      if (child !== undefined) return child;
      if (node === 0) return 0;
      node = this.fallback[node]!;
    }
  }

  /** Whether each word occurs in `text`, by the word's index in the list. */
  found(text: string): boolean[] {
    const present = new Array<boolean>(this.words.length).fill(false);
    // A node whose endings were reported once need not be walked again: the words are already found.
    const reported = new Set<number>();
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      node = this.step(node, text.charCodeAt(i));
      for (let at = this.endings[node]!.length > 0 ? node : this.nextEnding[node]!; at > 0 && !reported.has(at); at = this.nextEnding[at]!) {
        reported.add(at);
        for (const index of this.endings[at]!) present[index] = true;
      }
    }
    return present;
  }
}
