/** Optimal string alignment distance, case-insensitive: transposed letters count as one edit. */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2][j - 2] + 1);
      rows[i][j] = best;
    }
  }
  return rows[a.length][b.length];
}

/** Up to `count` of `known` nearest to `name`, nearest first, leaving out those too far to be a slip. */
export function closestNames(name: string, known: readonly string[], count: number): string[] {
  const wanted = name.toLowerCase().slice(0, 80);
  return known
    .map((candidate) => {
      const have = candidate.toLowerCase();
      const contained = wanted.length >= 4 && (have.includes(wanted) || wanted.includes(have));
      return { candidate, contained, score: distance(wanted, have), limit: Math.max(2, Math.floor(Math.max(wanted.length, have.length) / 3)) };
    })
    .filter(({ contained, score, limit }) => contained || score <= limit)
    .sort((a, b) => a.score - b.score)
    .slice(0, count)
    .map(({ candidate }) => candidate);
}
