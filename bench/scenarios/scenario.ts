/**
 * What a scenario module defines. The runner, the warm-ups, the soak and the report only ever go
 * through these fields, so a new scenario is a new module listed in ./index.ts and nothing else.
 */
import { SYSTEMS, type Env, type SystemName } from '../environment';
import type { HttpTarget } from '../lib/load';
import type { Service } from '../lib/services';

/** One verification response, read whole. Its status was already checked to be 200. */
export interface CheckedResponse {
  headers: Headers;
  text: string;
}

export interface Scenario {
  /** How `--soak-kind` and the warm-up messages name it; also the start of its run ids (`chat-c50`). */
  kind: string;
  /** How the tables name it, before ` c=N`. */
  label: string;
  /** The systems it is measured on, in the order of the first round. */
  systems: readonly SystemName[];
  /** The connection counts it is measured at; an empty list leaves it out of that mode. */
  connections(quick: boolean): readonly number[];
  /**
   * For a scenario without a direct run: the scenario whose direct run at the same connection count
   * is its baseline for added latency. The plan adds that run when it would not be there otherwise.
   */
  baseline?: Scenario;
  /**
   * Part of the warm-up before anything is measured: `every system` for the paths all three serve
   * (these also warm up a system restarted after a crash); `gateway` for the gateway's own paths.
   */
  warmUp?: 'every system' | 'gateway';
  /** The fake whose CPU is reported as the upstream's; it is also what answers `direct`. */
  upstream(env: Env): Service;
  target(env: Env, system: SystemName): HttpTarget;
  /**
   * Brings the system into the state the scenario measures before its first checked request (a
   * cached answer must exist before a hit can be verified); resolves once it is there.
   */
  prime?(env: Env, system: SystemName): Promise<void>;
  /** Why the answer to `target` is not the one the scenario is about, or undefined when it is. */
  check(response: CheckedResponse): string | undefined;
  /** Said under the results when the scenario was measured on that system. */
  notes?: Partial<Record<SystemName, string>>;
}

export function runId(scenario: Scenario, connections: number): string {
  return `${scenario.kind}-c${connections}`;
}

/** What the scenarios all three systems serve have in common: they are compared at each concurrency. */
export const onEverySystem = {
  systems: SYSTEMS,
  connections: (quick: boolean) => (quick ? [1, 50] : [1, 10, 50]),
  warmUp: 'every system',
  upstream: (env: Env) => env.upstream.service,
} satisfies Partial<Scenario>;
