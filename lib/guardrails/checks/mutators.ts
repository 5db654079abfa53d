import { CheckParameterError } from '../check-types';
import { defineCheck } from '../define-check';
import { scannedText } from '../limits';
import { optionalBoolean, optionalEnum, optionalString, regexParameter, requiredString } from '../parameters';
import { maxPatternLength, splitRegexLiteral } from '../../core/regex/safe-regex';
import { stepLimits, WorkBudget } from '../work-budget';

/** Checks that rewrite the text passed on; the runner writes `transformedText` back. */

export const addPrefix = defineCheck({
  id: 'default.addPrefix',
  mutator: true,
  sides: ['request', 'response'],
  invertible: false,
  parameters: ['prefix', 'applyToRole', 'addToExisting', 'onlyIfEmpty'],
  parse(params) {
    const prefix = requiredString(params, 'prefix', { maxLength: 10_000 });
    // Accepted for configs written for the peer gateway, with the one behaviour a text check has:
    // the prefix goes in front of the text checked (the last user message, or the answer).
    optionalEnum(params, 'applyToRole', ['user'], 'user');
    if (!optionalBoolean(params, 'addToExisting', true))
      throw new CheckParameterError('addToExisting', '`addToExisting: false` (a new message) is not supported: the prefix is added to the text checked.');
    if (optionalBoolean(params, 'onlyIfEmpty', false))
      throw new CheckParameterError('onlyIfEmpty', '`onlyIfEmpty: true` is not supported: the prefix is added to the text checked.');
    return { prefix };
  },
  run({ prefix }, input) {
    return { verdict: true, transformedText: prefix + input.text, data: { explanation: `Added a prefix of ${prefix.length} characters.` } };
  },
});

export const regexReplace = defineCheck({
  id: 'default.regexReplace',
  mutator: true,
  sides: ['request', 'response'],
  invertible: false,
  parameters: ['rule', 'redactText', 'failOnDetection', 'flags'],
  parse(params) {
    const rule = requiredString(params, 'rule', { maxLength: maxPatternLength + 12 });
    const literal = splitRegexLiteral(rule);
    const flags = literal.flags + optionalString(params, 'flags', '', { allowEmpty: true, maxLength: 8 });
    const regex = regexParameter('rule', literal.pattern, flags);
    if (regex.matchesEmpty)
      throw new CheckParameterError(
        'rule',
        '`rule` can match the empty string, so it would insert the replacement between characters; make it match at least one character.',
      );
    return {
      rule,
      regex,
      redactText: optionalString(params, 'redactText', '[REDACTED]', { allowEmpty: true, maxLength: 1_000 }),
      failOnDetection: optionalBoolean(params, 'failOnDetection', false),
    };
  },
  run({ rule, regex, redactText, failOnDetection }, input) {
    // Every match is replaced (not only the first, as a `RegExp` without `g` would): a redaction that
    // leaves the second secret in place is no redaction.
    const { text, count } = regex.replaceAll(scannedText(input.text), redactText, new WorkBudget('default.regexReplace', stepLimits.regex));
    return {
      verdict: !(failOnDetection && count > 0),
      transformedText: count > 0 ? text : undefined,
      data: {
        rule,
        replacements: count,
        explanation: count > 0 ? `Replaced ${count} match${count === 1 ? '' : 'es'} with ${JSON.stringify(redactText)}.` : 'The pattern matched nothing.',
      },
    };
  },
});
