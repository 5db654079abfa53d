/**
 * What can end a command, each with its own exit code so scripts can tell them apart: a usage
 * mistake (2) is fixed by changing the command line, a refusal (1) by changing what is asked or
 * with which key, and an unreachable gateway (3) by starting it or pointing `--url` elsewhere.
 */
export const exitCodes = { ok: 0, refused: 1, usage: 2, unreachable: 3 } as const;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
    readonly param: string | null,
  ) {
    super(message);
  }

  /** One line with everything a person needs to act on the refusal. */
  describe(): string {
    const details = [`HTTP ${this.status}`, this.code ? `code ${this.code}` : null, this.param ? `param ${this.param}` : null].filter(Boolean).join(', ');
    return `${this.message} (${details})`;
  }
}

export class UnreachableError extends Error {
  override readonly name = 'UnreachableError';
}
