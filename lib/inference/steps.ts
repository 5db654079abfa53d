/**
 * One named stage of a request or of one attempt at a target. A step does its work and calls
 * `next` for the stages after it (or answers without calling it, e.g. a cache hit or a denial), so
 * what runs, in which order, is the list the steps stand in, not code inside closures.
 */
export interface Step<Context, Result> {
  readonly name: string;
  run(context: Context, next: () => Promise<Result>): Promise<Result>;
}

/**
 * Runs the steps in order over one context; the last step answers without calling `next`. A step
 * that calls `next` a second time is refused: the steps after it would run twice over the same
 * context (two provider calls, two reservations), which is never what a step means.
 */
export function runSteps<Context, Result>(steps: readonly Step<Context, Result>[], context: Context): Promise<Result> {
  const runFrom = (index: number): Promise<Result> => {
    const step = steps[index];
    if (!step) return Promise.reject(new Error(`Step "${steps[index - 1]?.name}" called next, but no step follows it.`));
    let called = false;
    try {
      return step.run(context, () => {
        if (called) return Promise.reject(new Error(`Step "${step.name}" called next a second time; each step may call it once.`));
        called = true;
        return runFrom(index + 1);
      });
    } catch (error) {
      // A step that is not async and throws still fails as a promise, as its type says.
      return Promise.reject(error);
    }
  };
  return runFrom(0);
}

/** A value an earlier step sets; a step list in the wrong order fails here, by name, not later. */
export function setByStep<T>(value: T | undefined, step: string): T {
  if (value === undefined) throw new Error(`The "${step}" step must run before this one.`);
  return value;
}
