/**
 * The work one check may do on one text. Every check that can be made to do more than linear work
 * (a schema over nested data, a pattern with many states, many keys or words over a long text)
 * spends from a budget as it goes; past it the check stops with a CheckBudgetError, and its
 * `failOnError` decides the verdict. Budgets are counted in steps of the check's own kind, sized
 * so the worst accepted input stops after some tens of milliseconds, never after seconds.
 */

/** What a check's work is counted in and how much of it one run may take. */
export interface StepLimit {
  /** Named in the error, e.g. "validation steps". */
  unit: string;
  steps: number;
}

export const stepLimits = {
  /** Subschemas applied to values, plus values read, including item comparisons for `uniqueItems`. */
  jsonSchema: { unit: 'validation steps', steps: 50_000 },
  /** Listing every error of a value that failed (the verdict is known by then). */
  jsonSchemaReport: { unit: 'validation steps', steps: 5_000 },
  /** Keys looked up across every JSON object found in the text. */
  jsonKeys: { unit: 'key lookups', steps: 1_000_000 },
  /** Pattern instructions followed where the fast path has no answer cached. */
  regex: { unit: 'pattern steps', steps: 2_000_000 },
} satisfies Record<string, StepLimit>;

/** A check stopped because its work budget ran out; the message names the check's limit. */
export class CheckBudgetError extends Error {
  constructor(
    readonly checkId: string,
    readonly limit: StepLimit,
  ) {
    super(`${checkId} stopped after ${limit.steps.toLocaleString('en-US')} ${limit.unit}, the most one check may take on one text.`);
    this.name = 'CheckBudgetError';
  }
}

/** Steps left for one run of one check; `spend` throws once they are gone. */
export class WorkBudget {
  private left: number;

  constructor(
    private readonly checkId: string,
    private readonly limit: StepLimit,
  ) {
    this.left = limit.steps;
  }

  spend(steps: number): void {
    this.left -= steps;
    if (this.left < 0) throw new CheckBudgetError(this.checkId, this.limit);
  }

  get used(): number {
    return this.limit.steps - this.left;
  }
}
