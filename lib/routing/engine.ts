import type { GatewayConfig } from '../config/types';
import { badRequest } from '../core/errors';
import { sleep } from '../core/time';
import type { AttemptOutcome } from './attempt-outcome';
import { isBreakerFailure, verdict, type BreakerState, type CircuitBreakers } from './circuit-breaker';
import { matchesQuery, type QueryInput } from './conditional-query';
import { isLeaf, leavesOf, type PlanNode } from './plan';
import { maxRetryAfterTotalMs, retryDelayMs, shouldRetry } from './retry-policy';

/** What routing needs from the route: how to call one target, and what conditions look at. */
export interface RoutingEnvironment {
  /** Breaker state key of the workspace's config (`breakerIdentity`): the workspace, and the saved id or an inline config's hash. */
  identity: string;
  /** Where the targets' circuit breakers are kept. */
  breakers: CircuitBreakers;
  query: QueryInput;
  attempt(leaf: PlanNode): Promise<AttemptOutcome>;
  /** Work that must finish before the invocation ends but must not delay the answer. */
  waitUntil(work: Promise<unknown>): void;
}

export interface RoutingResult {
  outcome: AttemptOutcome;
  /** The target that gave the answer, e.g. `config.targets[1]`. */
  path: string;
  /** Retries made on that target. */
  retries: number;
}

/**
 * Walks the strategy tree: single, weighted loadbalance, fallback and conditional, nested to any
 * depth, with retries and circuit breakers on the targets.
 */
export async function runStrategy(root: PlanNode, env: RoutingEnvironment): Promise<RoutingResult> {
  const states = usesBreakers(root) ? await env.breakers.load(env.identity) : undefined;
  return new Router(env, states).run(root);
}

interface Candidate {
  node: PlanNode;
  /** Half-open: the probe must be claimed before the target is used. */
  probe: boolean;
}

class Router {
  constructor(
    private readonly env: RoutingEnvironment,
    /** The breakers' states, when a target of the tree has one. */
    private readonly states: Map<string, BreakerState> | undefined,
  ) {}

  async run(node: PlanNode): Promise<RoutingResult> {
    if (isLeaf(node)) return this.runTarget(node);
    const mode = node.config.strategy?.mode ?? 'single';
    if (mode === 'conditional') return this.run(this.conditionalTarget(node));
    const candidates = this.candidates(node.children);
    if (mode === 'fallback') return this.fallback(node, candidates);
    if (mode === 'loadbalance') return this.loadbalance(candidates, node.children);
    return this.run(node.children[0]);
  }

  private async fallback(node: PlanNode, candidates: Candidate[]): Promise<RoutingResult> {
    const codes = node.config.strategy?.on_status_codes;
    let last: RoutingResult | undefined;
    for (const candidate of candidates) {
      if (!(await this.admit(candidate))) continue;
      last = await this.run(candidate.node);
      // A flagged answer (246, output hooks failed without denying) is a success, unless the
      // strategy lists 246 among the statuses that fall back.
      if (last.outcome.ok) {
        if (!(last.outcome.status === 246 && codes?.includes(246))) return last;
      } else if (codes && !codes.includes(last.outcome.status)) return last;
    }
    // Every half-open target was being probed by someone else: treat them as all open.
    return (
      last ??
      this.fallback(
        node,
        node.children.map((child) => ({ node: child, probe: false })),
      )
    );
  }

  private async loadbalance(candidates: Candidate[], all: PlanNode[]): Promise<RoutingResult> {
    let pool = candidates;
    while (pool.length > 0) {
      const chosen = pickWeighted(pool.map((candidate) => candidate.node));
      const candidate = pool.find((entry) => entry.node === chosen)!;
      if (await this.admit(candidate)) return this.run(candidate.node);
      pool = pool.filter((entry) => entry !== candidate);
    }
    return this.run(pickWeighted(all));
  }

  private conditionalTarget(node: PlanNode): PlanNode {
    const strategy = node.config.strategy!;
    const byName = (name: string) => node.children.find((child) => child.config.name === name);
    for (const condition of strategy.conditions ?? []) {
      if (matchesQuery(condition.query, this.env.query)) {
        const target = byName(condition.then);
        if (target) return target;
      }
    }
    const fallbackTarget = strategy.default ? byName(strategy.default) : undefined;
    if (!fallbackTarget)
      throw badRequest(`No condition of ${node.path}.strategy matched the request and there is no default target.`, `${node.path}.strategy`, 'AB01');
    return fallbackTarget;
  }

  /**
   * The children a strategy may use, in order: closed targets, and half-open ones that need their
   * probe claimed first. When every target is open, all of them are candidates again.
   */
  private candidates(children: PlanNode[]): Candidate[] {
    if (!this.states) return children.map((node) => ({ node, probe: false }));
    const usable: Candidate[] = [];
    for (const node of children) {
      const settings = node.settings.cb_config;
      const state = settings && isLeaf(node) ? verdict(this.states.get(node.path), settings) : 'closed';
      if (state !== 'open') usable.push({ node, probe: state === 'half-open' });
    }
    return usable.length > 0 ? usable : children.map((node) => ({ node, probe: false }));
  }

  private async admit(candidate: Candidate): Promise<boolean> {
    return !candidate.probe || this.env.breakers.claimProbe(this.env.identity, candidate.node.path, candidate.node.settings.cb_config!);
  }

  private async runTarget(leaf: PlanNode): Promise<RoutingResult> {
    const retry = leaf.settings.retry;
    let retries = 0;
    let waitedForRetryAfter = 0;
    for (;;) {
      const outcome = await this.env.attempt(leaf);
      this.recordBreaker(leaf, outcome);
      if (outcome.ok || !retry || retries >= retry.attempts || !shouldRetry(retry, outcome)) return { outcome, path: leaf.path, retries };
      const delay = retryDelayMs(retry, retries + 1, outcome);
      if (retry.use_retry_after_headers) {
        if (waitedForRetryAfter + delay > maxRetryAfterTotalMs) return { outcome, path: leaf.path, retries };
        waitedForRetryAfter += delay;
      }
      await sleep(delay);
      retries++;
    }
  }

  private recordBreaker(leaf: PlanNode, outcome: AttemptOutcome): void {
    const settings = leaf.settings.cb_config;
    if (!settings || !this.states) return;
    const failed = !outcome.ok && isBreakerFailure(settings, outcome.status, outcome.network);
    const known = this.states.get(leaf.path);
    if (failed) this.env.waitUntil(this.env.breakers.recordFailure(this.env.identity, leaf.path, settings).catch(reportBreakerError));
    else if (known) {
      this.states.delete(leaf.path);
      this.env.waitUntil(this.env.breakers.recordSuccess(this.env.identity, leaf.path).catch(reportBreakerError));
    }
  }
}

function reportBreakerError(error: unknown): void {
  console.error('Circuit breaker state could not be written', error);
}

function usesBreakers(root: PlanNode): boolean {
  return leavesOf(root).some((leaf) => leaf.settings.cb_config !== undefined);
}

/** Weighted random choice; a missing weight counts 1 and weight 0 is never chosen. */
export function pickWeighted(children: PlanNode[], random = Math.random()): PlanNode {
  const weightOf = (node: PlanNode) => (node.config as GatewayConfig).weight ?? 1;
  const total = children.reduce((sum, child) => sum + weightOf(child), 0);
  if (total <= 0) return children[0];
  let point = random * total;
  for (const child of children) {
    point -= weightOf(child);
    if (point < 0 && weightOf(child) > 0) return child;
  }
  return children.filter((child) => weightOf(child) > 0).at(-1) ?? children[0];
}
