/**
 * Every scenario, in the order they are measured and reported. Adding one is a module beside this
 * file and a line in the list.
 */
import type { SystemName } from '../environment';
import { anthropic } from './anthropic';
import { anthropicStream } from './anthropic-stream';
import { budgeted } from './budgeted';
import { cacheHit } from './cache-hit';
import { cacheHitStream } from './cache-hit-stream';
import { chat } from './chat';
import { fallback } from './fallback';
import { chat4k, guardrails } from './guardrails';
import { rateLimited } from './rate-limited';
import { responses } from './responses';
import { runId, type Scenario } from './scenario';
import { stream } from './stream';

export const scenarios: readonly Scenario[] = [
  chat,
  stream,
  responses,
  fallback,
  anthropic,
  anthropicStream,
  cacheHit,
  cacheHitStream,
  chat4k,
  guardrails,
  rateLimited,
  budgeted,
];

/** One scenario at one connection count, on the systems it is measured on. */
export interface PlannedRun {
  id: string;
  label: string;
  scenario: Scenario;
  connections: number;
  systems: readonly SystemName[];
  /** The run whose `direct` result is the baseline for added latency. */
  baselineId: string;
}

export function plan(quick: boolean): PlannedRun[] {
  const runs: PlannedRun[] = [];
  const add = (scenario: Scenario, connections: number, systems: readonly SystemName[], baseline = scenario) =>
    runs.push({
      id: runId(scenario, connections),
      label: `${scenario.label} c=${connections}`,
      scenario,
      connections,
      systems,
      baselineId: runId(baseline, connections),
    });
  for (const scenario of scenarios) {
    for (const connections of scenario.connections(quick)) {
      const { baseline } = scenario;
      // A baseline the plan lacks (quick mode has no chat c=10) is measured on direct alone, right before.
      if (baseline && !runs.some((run) => run.id === runId(baseline, connections) && run.systems.includes('direct'))) add(baseline, connections, ['direct']);
      add(scenario, connections, scenario.systems, baseline);
    }
  }
  return runs;
}

/** The scenarios `--soak` can send: any the gateway is measured on. */
export const soakable = scenarios.filter((scenario) => scenario.systems.includes('ours'));
