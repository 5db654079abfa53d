/** The printed tables, one function per table; `–` stands for what does not apply to a row. */
import type { BundleResult } from './lib/bundles';
import { count, fixed, mark, ms, signedMs, table, type Cell } from './lib/table';
import type { Outcome } from './results';
import type { SemanticLookupResult } from './semantic-lookup';
import type { Target } from './targets';
import type { TtfcResult } from './ttfc';

export function mainTable(outcomes: Outcome[]): string {
  const rows: Cell[][] = outcomes.map((o) => {
    const problems = [
      o.exits ? `exited ×${o.exits}` : '',
      o.socketErrors ? `${o.socketErrors} socket errors` : '',
      o.badStatus ? `${o.badStatus} bad status` : '',
    ]
      .filter(Boolean)
      .join(', ');
    return [
      o.label,
      o.system,
      count(o.median.rps),
      ms(o.median.p50),
      ms(o.median.p90),
      ms(o.median.p99),
      o.system === 'direct' ? undefined : signedMs(o.addedP50),
      o.system === 'direct' ? undefined : signedMs(o.addedP99),
      ms(o.ttfcP50),
      o.system === 'direct' ? undefined : fixed(o.median.cpuUsPerReq, 0),
      o.system === 'direct' ? undefined : fixed(o.median.childrenUsPerReq, 0),
      o.system === 'ours' ? fixed(o.median.emulatorsUsPerReq, 0) : undefined,
      o.system === 'direct' ? undefined : fixed(o.rssMaxMb, 1),
      problems || undefined,
    ];
  });
  return table(
    [
      { title: 'scenario' },
      { title: 'system', right: false },
      { title: 'req/s' },
      { title: 'p50 ms' },
      { title: 'p90 ms' },
      { title: 'p99 ms' },
      { title: '+p50 ms' },
      { title: '+p99 ms' },
      { title: 'TTFC ms' },
      { title: 'CPU µs/req' },
      { title: 'child µs/req' },
      { title: 'emu µs/req' },
      { title: 'RSS MB' },
      { title: 'problems', right: false },
    ],
    rows,
  );
}

export function cpuTable(outcomes: Outcome[]): string {
  return table(
    [
      { title: 'scenario' },
      { title: 'system', right: false },
      { title: 'system %' },
      { title: 'child %' },
      { title: 'upstream %' },
      { title: 'emulators %' },
      { title: 'load gen %' },
      { title: 'other %' },
      { title: 'machine busy %' },
      { title: 'upstream µs/req' },
      { title: 'log drain ms' },
    ],
    outcomes.map((o) => [
      o.label,
      o.system,
      o.system === 'direct' ? undefined : fixed(o.median.cpuPct.system, 0),
      fixed(o.median.cpuPct.children, 0),
      fixed(o.median.cpuPct.upstream, 0),
      fixed(o.median.cpuPct.emulators, 0),
      fixed(o.median.cpuPct.loadgen, 0),
      fixed(o.median.cpuPct.other, 0),
      fixed(o.median.cpuPct.machineBusyOfAllCores, 0),
      fixed(o.median.upstreamUsPerReq, 0),
      fixed(o.median.logDrainMs, 0),
    ]),
  );
}

export function ttfcTable(results: TtfcResult[]): string {
  return table(
    [
      { title: 'system' },
      { title: 'headers p50' },
      { title: 'first chunk p50' },
      { title: 'p90' },
      { title: 'p99' },
      { title: 'last byte p50' },
      { title: '+first chunk p50' },
      { title: 'CPU µs/req' },
      { title: 'child µs/req' },
      { title: 'failures' },
    ],
    results.map((r) => [
      r.system,
      ms(r.headers.p50),
      ms(r.firstChunk.p50),
      ms(r.firstChunk.p90),
      ms(r.firstChunk.p99),
      ms(r.total.p50),
      r.system === 'direct' ? undefined : signedMs(r.addedFirstChunkP50),
      r.system === 'direct' ? undefined : fixed(r.cpuUsPerReq, 0),
      r.system === 'direct' ? undefined : fixed(r.childrenUsPerReq, 0),
      r.failures,
    ]),
  );
}

export function bundleTable(bundles: BundleResult[]): string {
  return table(
    [
      { title: 'bundle' },
      { title: 'inference', right: false },
      { title: 'size KB' },
      { title: 'with chunks KB' },
      { title: 'zip KB' },
      { title: 'cold import ms' },
      { title: 'process ms' },
      { title: 'targets', right: false },
    ],
    bundles.map((b) => [
      b.name,
      b.inference ? 'yes' : 'no',
      fixed(b.bytes / 1000, 1),
      fixed(b.totalBytes / 1000, 1),
      b.zipBytes === undefined ? undefined : fixed(b.zipBytes / 1000, 1),
      fixed(b.importMs, 1),
      fixed(b.processMs, 1),
      b.error ? `import failed` : b.inference ? `${mark(b.bytes <= 600_000)} size ${mark(b.importMs <= 90)} import` : undefined,
    ]),
  );
}

export function targetTable(targets: Target[]): string {
  return table(
    [{ title: 'target' }, { title: 'goal', right: false }, { title: 'measured' }, { title: '', right: false }],
    targets.map((t) => [t.name, t.goal, t.value, mark(t.pass)]),
  );
}

export function semanticLookupTable(result: SemanticLookupResult): string {
  return table(
    [
      { title: 'entries' },
      { title: 'items read mean' },
      { title: 'max' },
      { title: 'candidates' },
      { title: 'CPU µs/lookup' },
      { title: 'emu µs/lookup' },
      { title: 'p50 ms' },
      { title: 'p99 ms' },
      { title: 'recall' },
      { title: `recall newest ${count(result.newestWindow)}` },
      { title: 'fill s' },
      { title: 'entries/s' },
    ],
    result.sizes.map((size) => [
      count(size.entries),
      fixed(size.itemsRead.mean, 1),
      size.itemsRead.max,
      fixed(size.candidates.mean, 1),
      fixed(size.cpuUsPerLookup, 0),
      fixed(size.emulatorUsPerLookup, 0),
      ms(size.latencyMs.p50),
      ms(size.latencyMs.p99),
      fixed(size.recall.all, 3),
      fixed(size.recall.newest, 3),
      fixed(size.fillSec, 1),
      count(size.fillEntriesPerSec),
    ]),
  );
}
