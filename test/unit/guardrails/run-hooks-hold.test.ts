import { describe, expect, it } from 'vitest';
import type { HookSpec } from '../../../lib/guardrails/hook-specs';
import { runHooks, type CheckRun, type RunCheck } from '../../../lib/guardrails/run-hooks';

/** Keeps the thread busy for `ms`, as a heavy synchronous check does. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const exchange = { operation: 'chat' as const, request: { model: 'm', messages: [{ role: 'user', content: 'hello' }] }, metadata: {}, headers: {} };
const passed = (id: string): CheckRun => ({ id, verdict: true, data: null, execution_time: 0, transformed: false });
const hookOf = (id: string, count: number): HookSpec => ({
  id,
  type: 'guardrail',
  deny: false,
  async: false,
  checks: Array.from({ length: count }, (_, index) => ({ id: `check-${index}`, parameters: {} })),
});

describe('a hook run and the event loop', () => {
  it('hands the loop back between heavy checks, so many of them never add up to one long hold', async () => {
    const events: string[] = [];
    const heavy: RunCheck = (check) => {
      events.push('check');
      busyFor(25);
      return passed(check.id);
    };
    setImmediate(() => events.push('other work'));
    const outcome = await runHooks([hookOf('first', 2), hookOf('second', 2)], 'input', exchange, heavy);
    expect(outcome.passed).toBe(true);
    // Other work ran before the last checks, not only after the whole run.
    expect(events.indexOf('other work')).toBeGreaterThan(0);
    expect(events.indexOf('other work')).toBeLessThan(events.length - 1);
  });

  it('runs light checks without handing the loop back', async () => {
    const events: string[] = [];
    const light: RunCheck = (check) => {
      events.push('check');
      return passed(check.id);
    };
    setImmediate(() => events.push('other work'));
    await runHooks([hookOf('light', 50)], 'input', exchange, light);
    expect(events).not.toContain('other work');
  });
});
