import { describe, expect, it } from 'vitest';
import { runSteps, setByStep, type Step } from '../../lib/inference/steps';

const step = (name: string, run: Step<string[], string>['run']): Step<string[], string> => ({ name, run });

describe('runSteps', () => {
  it('runs steps in list order, each around the ones after it', async () => {
    const steps = [
      step('outer', async (trail, next) => {
        trail.push('outer in');
        const result = await next();
        trail.push('outer out');
        return `outer(${result})`;
      }),
      step('inner', async (trail) => {
        trail.push('inner');
        return 'answer';
      }),
    ];
    const trail: string[] = [];
    expect(await runSteps(steps, trail)).toBe('outer(answer)');
    expect(trail).toEqual(['outer in', 'inner', 'outer out']);
  });

  it('lets a step answer without running the rest', async () => {
    const trail: string[] = [];
    const result = await runSteps([step('hit', async () => 'early'), step('never', async (list) => (list.push('ran'), 'late'))], trail);
    expect([result, trail]).toEqual(['early', []]);
  });

  it('fails by name when the last step calls next', async () => {
    await expect(runSteps([step('last', (_, next) => next())], [])).rejects.toThrow('Step "last" called next, but no step follows it.');
  });

  it('refuses a second call of next, so the steps after it never run twice', async () => {
    const trail: string[] = [];
    const twice = step('twice', async (_, next) => {
      await next();
      return next();
    });
    const counted = step('counted', async (list) => (list.push('ran'), 'answer'));
    await expect(runSteps([twice, counted], trail)).rejects.toThrow('Step "twice" called next a second time; each step may call it once.');
    expect(trail).toEqual(['ran']);
  });

  it('fails as a promise when a step that is not async throws', async () => {
    const throwing = step('throws', () => {
      throw new Error('refused at once');
    });
    const running = runSteps([step('outer', (_, next) => next()), throwing], []);
    expect(running).toBeInstanceOf(Promise);
    await expect(running).rejects.toThrow('refused at once');
  });

  it('names the step that must come first when a list is out of order', () => {
    expect(() => setByStep(undefined, 'config')).toThrow('The "config" step must run before this one.');
    expect(setByStep(0, 'config')).toBe(0);
  });
});
