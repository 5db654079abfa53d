import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../bench/results';
import { chat } from '../../bench/scenarios/chat';
import { runId } from '../../bench/scenarios/scenario';
import { evaluateTargets, judge, type Measured } from '../../bench/targets';
import { mark } from '../../bench/lib/table';

const noise = 'the direct run was slower than the gateway run at this percentile (noise)';
const latency = { name: 'latency added, chat c=1, p99', goal: '≤ 3 ms', limit: 3, higherIsBetter: false, format: (v: number) => `${v} ms` };

describe('bench targets', () => {
  it('meet or miss a goal on the side of the limit the goal names', () => {
    expect(judge({ ...latency, value: 2.5, belowZero: noise })).toMatchObject({ value: '2.5 ms', pass: true });
    expect(judge({ ...latency, value: 4.1, belowZero: noise })).toMatchObject({ value: '4.1 ms', pass: false });
    expect(judge({ ...latency, value: 0, belowZero: noise })).toMatchObject({ value: '0 ms', pass: true });
    expect(judge({ ...latency, value: 5000, limit: 2500, higherIsBetter: true })).toMatchObject({ pass: true });
    expect(judge({ ...latency, value: undefined })).toMatchObject({ value: 'n/a', pass: undefined });
  });

  // An added cost below zero is the baseline run's noise: it says nothing about the goal, so a ✓ would be a lie.
  it('show an added cost below zero as not measurable, with the reason, never as met', () => {
    const target = judge({ ...latency, value: -37, belowZero: noise });
    expect(target.pass).toBeUndefined();
    expect(target.unmeasurable).toBe(`not measurable: ${noise}`);
    expect(target.value).toBe(`-37 ms, not measurable: ${noise}`);
    expect(mark(target.pass)).not.toBe('✓');
  });

  it('judge a value below zero as usual where it can be right (no reason given)', () => {
    // e.g. a cache hit's p50 minus the uncached p50: below zero is the goal.
    const target = judge({ ...latency, value: -0.3, limit: 0 });
    expect(target.pass).toBe(true);
    expect(target.unmeasurable).toBeUndefined();
  });

  it('apply it to the latency the gateway adds over direct', () => {
    const chat1 = { scenario: runId(chat, 1), system: 'ours', addedP50: 0.2, addedP99: -37, median: {}, exits: 0 } as unknown as Outcome;
    const measured = {
      outcomes: [chat1],
      ttfc: [],
      bundles: [],
      restarts: [],
      semanticLookup: { sizes: [], maxItemsPerLookup: 160 },
    } as unknown as Measured;
    const targets = evaluateTargets(measured);
    expect(targets.find((t) => t.name === 'latency added, chat c=1, p50')).toMatchObject({ pass: true });
    expect(targets.find((t) => t.name === 'latency added, chat c=1, p99')).toMatchObject({ pass: undefined, unmeasurable: `not measurable: ${noise}` });
  });
});
