/** The goals the benchmark reports against (✓/✗). They are informational: none changes the exit code. */
import { STREAM_CHUNKS, type SystemName } from './environment';
import type { ColdHitResult } from './cache-cold';
import type { WebhookLatency } from './guardrail-webhook';
import type { RateLimitWrites } from './rate-limit-writes';
import type { BundleResult } from './lib/bundles';
import { count, ms } from './lib/table';
import type { Outcome } from './results';
import type { Restart } from './runner';
import type { SemanticLookupResult } from './semantic-lookup';
import { cacheHit, type PeerCacheProbe } from './scenarios/cache-hit';
import { cacheHitStream } from './scenarios/cache-hit-stream';
import { chat } from './scenarios/chat';
import { chat4k, guardrails } from './scenarios/guardrails';
import { budgeted } from './scenarios/budgeted';
import { rateLimited } from './scenarios/rate-limited';
import { runId } from './scenarios/scenario';
import { stream } from './scenarios/stream';
import type { SoakResult } from './soak';
import type { TtfcResult } from './ttfc';

export interface Target {
  name: string;
  goal: string;
  value: string;
  /** Undefined when nothing was measured, or when what was measured cannot be right (`unmeasurable`). */
  pass: boolean | undefined;
  /** Why the measured value was not judged: it cannot be right, so it says nothing about the goal. */
  unmeasurable?: string;
}

/** What a target compares: a value against a limit, the side of the limit that meets the goal, and how to show it. */
export interface Judged {
  name: string;
  goal: string;
  value: number | undefined;
  limit: number;
  higherIsBetter: boolean;
  format: (v: number) => string;
  /**
   * For a cost added over a baseline measured in another run (latency over direct, CPU over plain
   * chat): the reason a value below zero cannot be right. Such a value is the two runs' noise, not a
   * cost that meets any goal, so it is shown as not measurable instead of ✓.
   */
  belowZero?: string;
}

export function judge({ name, goal, value, limit, higherIsBetter, format, belowZero }: Judged): Target {
  if (value === undefined) return { name, goal, value: 'n/a', pass: undefined };
  if (belowZero !== undefined && value < 0) {
    const unmeasurable = `not measurable: ${belowZero}`;
    return { name, goal, value: `${format(value)}, ${unmeasurable}`, pass: undefined, unmeasurable };
  }
  return { name, goal, value: format(value), pass: higherIsBetter ? value >= limit : value <= limit };
}

const directSlowerAtPercentile = 'the direct run was slower than the gateway run at this percentile (noise)';
const baselineUsedMore = 'plain chat used more CPU per request than this scenario in the same run (noise)';
const chat4kUsedMore = 'the 4 KB chat without hooks used more CPU per request than with them in the same run (noise)';

export interface Measured {
  outcomes: Outcome[];
  ttfc: TtfcResult[];
  coldHits: ColdHitResult;
  webhookLatency: WebhookLatency;
  rateLimitWrites: RateLimitWrites | undefined;
  peerCache: PeerCacheProbe;
  bundles: BundleResult[];
  gatewayPeakMb: number | undefined;
  soak: SoakResult | undefined;
  restarts: Restart[];
  semanticLookup: SemanticLookupResult;
}

export function evaluateTargets({ outcomes, ttfc, bundles, gatewayPeakMb, soak, restarts, rateLimitWrites, semanticLookup }: Measured): Target[] {
  const find = (id: string, system: SystemName) => outcomes.find((o) => o.scenario === id && o.system === system);
  const targets: Target[] = [];
  const check = (
    name: string,
    goal: string,
    value: number | undefined,
    limit: number,
    higherIsBetter: boolean,
    format: (v: number) => string,
    belowZero?: string,
  ) => {
    targets.push(judge({ name, goal, value, limit, higherIsBetter, format, belowZero }));
  };
  const chat1 = find(runId(chat, 1), 'ours');
  check('latency added, chat c=1, p50', '≤ 0.5 ms', chat1?.addedP50, 0.5, false, (v) => `${ms(v)} ms`, directSlowerAtPercentile);
  check('latency added, chat c=1, p99', '≤ 2 ms', chat1?.addedP99, 2, false, (v) => `${ms(v)} ms`, directSlowerAtPercentile);
  const withChildren = (children: number | undefined) => (v: number) =>
    `${v.toFixed(0)} µs${children !== undefined ? ` (+${children.toFixed(0)} log worker)` : ''}`;
  const chat50 = find(runId(chat, 50), 'ours');
  const stream50 = find(runId(stream, 50), 'ours');
  check('gateway CPU per chat request (c=50)', '≤ 300 µs', chat50?.median.cpuUsPerReq, 300, false, withChildren(chat50?.median.childrenUsPerReq));
  check(
    `gateway CPU per streamed request, ${STREAM_CHUNKS} chunks (c=50)`,
    '≤ 450 µs',
    stream50?.median.cpuUsPerReq,
    450,
    false,
    withChildren(stream50?.median.childrenUsPerReq),
  );
  const ttfcOurs = ttfc.find((t) => t.system === 'ours');
  check(
    `gateway CPU per streamed request, ${STREAM_CHUNKS} chunks paced (c=1)`,
    '≤ 450 µs',
    ttfcOurs?.cpuUsPerReq,
    450,
    false,
    withChildren(ttfcOurs?.childrenUsPerReq),
  );
  for (const [scenario, floor, ratio, what] of [
    [chat, 2500, 4.5, 'chat'],
    [stream, 1000, 8, 'streamed'],
  ] as const) {
    const ours = find(runId(scenario, 50), 'ours');
    const peer = find(runId(scenario, 50), 'peer');
    check(`throughput, ${what} c=50`, `≥ ${floor.toLocaleString('en-US')} req/s`, ours?.median.rps, floor, true, (v) => `${count(v)} req/s`);
    check(
      `throughput vs peer, ${what} c=50`,
      `≥ ${ratio}×`,
      ours && peer ? ours.median.rps / peer.median.rps : undefined,
      ratio,
      true,
      (v) => `${v.toFixed(2)}×`,
    );
  }
  // A hit is only worth having if it beats the provider call it replaces, measured in the same run.
  for (const [hit, uncached, what] of [
    [cacheHit, chat, 'chat'],
    [cacheHitStream, stream, 'stream'],
  ] as const) {
    const hit50 = find(runId(hit, 50), 'ours');
    const uncached50 = find(runId(uncached, 50), 'ours');
    check(
      `throughput, cache hit vs uncached ${what} c=50`,
      '≥ 1.3×',
      hit50 && uncached50 ? hit50.median.rps / uncached50.median.rps : undefined,
      1.3,
      true,
      (v) => `${v.toFixed(2)}× (${count(hit50!.median.rps)} vs ${count(uncached50!.median.rps)} req/s)`,
    );
    const hit1 = find(runId(hit, 1), 'ours');
    const uncached1 = find(runId(uncached, 1), 'ours');
    check(
      `p50, cache hit vs uncached ${what} c=1`,
      `≤ uncached ${what}`,
      hit1 && uncached1 ? hit1.median.p50 - uncached1.median.p50 : undefined,
      0,
      false,
      () => `${ms(hit1!.median.p50)} vs ${ms(uncached1!.median.p50)} ms`,
    );
  }
  // Guardrails left on must cost little next to the call they guard, measured in the same run.
  const guardedCpu = find(runId(guardrails, 50), 'ours')?.median.cpuUsPerReq;
  const chatCpu = chat50?.median.cpuUsPerReq;
  const chat4kCpu = find(runId(chat4k, 50), 'ours')?.median.cpuUsPerReq;
  check(
    'guardrails: CPU above plain chat (c=50; 3 input + 2 output checks, 4 KB)',
    '≤ 150 µs',
    guardedCpu !== undefined && chatCpu !== undefined ? guardedCpu - chatCpu : undefined,
    150,
    false,
    (v) => `${v.toFixed(0)} µs (${guardedCpu!.toFixed(0)} vs ${chatCpu!.toFixed(0)} µs)`,
    baselineUsedMore,
  );
  // Apart: the hooks alone, against the same 4 KB conversation sent without them.
  check(
    'guardrails: CPU above the same 4 KB chat without hooks (c=50)',
    '≤ 150 µs',
    guardedCpu !== undefined && chat4kCpu !== undefined ? guardedCpu - chat4kCpu : undefined,
    150,
    false,
    (v) => `${v.toFixed(0)} µs (${guardedCpu!.toFixed(0)} vs ${chat4kCpu!.toFixed(0)} µs)`,
    chat4kUsedMore,
  );
  // A never-reached requests policy must cost next to nothing over plain chat, measured in the same run.
  const limitedCpu = find(runId(rateLimited, 50), 'ours')?.median.cpuUsPerReq;
  check(
    'rate-limited: CPU above plain chat (c=50; requests policy never reached)',
    '≤ 60 µs',
    limitedCpu !== undefined && chatCpu !== undefined ? limitedCpu - chatCpu : undefined,
    60,
    false,
    (v) => `${v.toFixed(0)} µs (${limitedCpu!.toFixed(0)} vs ${chatCpu!.toFixed(0)} µs)`,
    baselineUsedMore,
  );
  check(
    'rate-limited: DynamoDB writes per request (counter writes ÷ requests reserved)',
    '≤ 0.1',
    rateLimitWrites?.writesPerRequest,
    0.1,
    false,
    (v) => `${v.toFixed(4)} (${count(rateLimitWrites!.writes)} writes for ${count(rateLimitWrites!.reserved)} requests)`,
  );
  // A budget reads its bucket before each request and adds the tokens after it: no reservations.
  const budgetedCpu = find(runId(budgeted, 50), 'ours')?.median.cpuUsPerReq;
  check(
    'budgeted: CPU above plain chat (c=50; token budget never used up)',
    '≤ 100 µs',
    budgetedCpu !== undefined && chatCpu !== undefined ? budgetedCpu - chatCpu : undefined,
    100,
    false,
    (v) => `${v.toFixed(0)} µs (${budgetedCpu!.toFixed(0)} vs ${chatCpu!.toFixed(0)} µs)`,
    baselineUsedMore,
  );
  check(
    'streaming adds to the first chunk (c=1, p50)',
    '≤ 1 ms',
    ttfcOurs?.addedFirstChunkP50,
    1,
    false,
    (v) => `${ms(v)} ms`,
    "the direct client got its first chunk later than the gateway's client (noise)",
  );
  for (const bundle of bundles.filter((b) => b.inference)) {
    check(`bundle ${bundle.name}: size`, '≤ 600 KB', bundle.bytes / 1000, 600, false, (v) => `${v.toFixed(0)} KB`);
    check(`bundle ${bundle.name}: cold import`, '≤ 90 ms', bundle.importMs, 90, false, (v) => `${v.toFixed(1)} ms`);
  }
  check('gateway peak RSS under load', '≤ 150 MB', gatewayPeakMb, 150, false, (v) => `${v.toFixed(1)} MB`);
  if (soak) {
    check(
      `gateway RSS growth over the ${soak.seconds} s ${soak.kind} soak`,
      '≤ 10 MB (flat)',
      soak.growthMb,
      10,
      false,
      (v) => `${v >= 0 ? '+' : ''}${v.toFixed(1)} MB`,
    );
    check('gateway peak RSS during the soak', '≤ 150 MB', soak.maxRssMb, 150, false, (v) => `${v.toFixed(1)} MB`);
  }
  targets.push(semanticLookupTarget(semanticLookup));
  // Exits during the load runs are counted per outcome; the TTFC stage and the soak have none.
  const exits =
    outcomes.reduce((sum, o) => sum + (o.system === 'ours' ? o.exits : 0), 0) +
    restarts.filter((r) => r.system === 'ours' && (r.scenario === 'ttfc' || r.scenario === 'soak')).length;
  targets.push({ name: 'gateway stayed up (clients disconnecting at the end of each run)', goal: '0 exits', value: `${exits} exits`, pass: exits === 0 });
  return targets;
}

/**
 * A semantic lookup must cost the same in a large scope as in a small one: the items it reads stay
 * within the per-bucket limits at every size, and its CPU at the largest size within twice that at
 * the smallest (more of the candidate slots fill as buckets grow; nothing else should grow).
 */
export function semanticLookupTarget(result: SemanticLookupResult): Target {
  const { sizes, maxItemsPerLookup } = result;
  const smallest = sizes[0];
  const largest = sizes.at(-1);
  const itemsMax = sizes.map((size) => size.itemsRead.max);
  const cpuRatio = smallest?.cpuUsPerLookup && largest?.cpuUsPerLookup !== undefined ? largest.cpuUsPerLookup / smallest.cpuUsPerLookup : undefined;
  const itemsFlat = sizes.length > 0 && itemsMax.every((max) => max <= maxItemsPerLookup);
  const sizeLabel = (size: { entries: number } | undefined) => (size ? count(size.entries) : '?');
  return {
    name: 'semantic lookup items read flat',
    goal: `max items ≤ ${maxItemsPerLookup} at every size; CPU at ${sizeLabel(largest)} ≤ 2× ${sizeLabel(smallest)}`,
    value: `max ${itemsMax.join(' / ')}; CPU ${cpuRatio === undefined ? 'n/a' : `${cpuRatio.toFixed(2)}×`}`,
    pass: sizes.length === 0 ? undefined : !itemsFlat ? false : cpuRatio === undefined ? undefined : cpuRatio <= 2,
  };
}
