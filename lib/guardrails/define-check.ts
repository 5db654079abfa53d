import { isPlainObject } from '../core/plain-object';
import { type CheckDefinition, CheckParameterError } from './check-types';
import { closestNames } from './closest-names';
import { optionalBoolean } from './parameters';

type Params = Record<string, unknown>;

export interface CheckSpec<P> extends Omit<CheckDefinition<P>, 'parse'> {
  /** Reads the check's own parameters; the common ones are checked before it is called. */
  parse(parameters: Params): P;
}

/** Parameters every check takes (DESIGN §5: a check that throws fails only when `failOnError` is true). */
export const commonParameters = ['not', 'failOnError'] as const;

/**
 * Wraps a check's own parameter reader with what every check shares: the parameters are an object,
 * every name is one the check reads (a misspelt one is refused with the closest known name, since a
 * misspelt limit would otherwise be ignored in silence), and `not` and `failOnError` are booleans.
 */
export function defineCheck<P>(spec: CheckSpec<P>): CheckDefinition<P> {
  const known = [...spec.parameters, ...commonParameters];
  return {
    ...spec,
    parse(parameters: unknown): P {
      const params = parameters ?? {};
      // Messages leave the check's id out: a saved config or guardrail prefixes it
      // (parseCheckParameters), and a hook result shows it next to the error.
      if (!isPlainObject(params))
        throw new CheckParameterError(
          [],
          `\`parameters\` must be an object of parameter names to values; got ${Array.isArray(params) ? 'an array' : typeof params}.`,
        );
      for (const name of Object.keys(params)) {
        if (known.includes(name)) continue;
        const close = closestNames(name, known, 1)[0];
        throw new CheckParameterError(
          name,
          `Unknown parameter \`${name.slice(0, 100)}\`${close ? ` — did you mean \`${close}\`?` : '.'} This check takes ${known.map((item) => `\`${item}\``).join(', ')}.`,
        );
      }
      const not = optionalBoolean(params, 'not', false);
      if (not && !spec.invertible)
        throw new CheckParameterError(
          'not',
          `This check does not support \`not\`: ${spec.parameters.includes('operator') ? 'use `operator` instead' : 'its verdict cannot be meaningfully inverted; remove `not`'}.`,
        );
      optionalBoolean(params, 'failOnError', spec.failOnErrorByDefault ?? false);
      return spec.parse(params);
    },
  };
}
