import { jsonPath, type PathKey } from '../core/json-path';
import { isPlainObject } from '../core/plain-object';
import { CheckParameterError } from './check-types';
import { compileSafeRegex, isRegexSyntaxError, type SafeRegex } from '../core/regex/safe-regex';

/**
 * Readers for check parameters. Each one throws a CheckParameterError that names the parameter and
 * says what it should be, so a config author can fix it from the message alone.
 */

type Params = Record<string, unknown>;

const describe = (value: unknown) =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'string'
        ? `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`
        : `${typeof value} ${JSON.stringify(value)}`;

/** `at` is a parameter's name, or the path to a value inside one (`['words', 2]`). */
export function fail(at: string | readonly PathKey[], expected: string, value: unknown): never {
  const path = typeof at === 'string' ? [at] : at;
  throw new CheckParameterError(path, `\`${jsonPath('', path)}\` must be ${expected}; got ${describe(value)}.`);
}

/**
 * Runs a reader on an object nested in the parameters (`rules`, `params.values.model`), so that what
 * it refuses is reported at its whole path: `rules.defaults` rather than `defaults`, in the path and
 * in the message alike.
 */
export function within<T>(prefix: readonly PathKey[], read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof CheckParameterError)) throw error;
    const path = [...prefix, ...error.path];
    throw new CheckParameterError(path, error.message.replaceAll(`\`${error.parameter}\``, `\`${jsonPath('', path)}\``));
  }
}

export function requireParameter(params: Params, name: string, expected: string): unknown {
  const value = params[name];
  if (value === undefined || value === null) throw new CheckParameterError(name, `\`${name}\` is required: ${expected}.`);
  return value;
}

export function optionalBoolean(params: Params, name: string, fallback: boolean): boolean {
  const value = params[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') fail(name, 'true or false', value);
  return value;
}

export function optionalNumber(params: Params, name: string, fallback: number, options: { min?: number; max?: number; integer?: boolean } = {}): number {
  const value = params[name];
  if (value === undefined || value === null) return fallback;
  return checkNumber(name, value, options);
}

export function requiredNumber(params: Params, name: string, options: { min?: number; max?: number; integer?: boolean } = {}): number {
  return checkNumber(name, requireParameter(params, name, 'a number'), options);
}

function checkNumber(name: string, value: unknown, { min, max, integer }: { min?: number; max?: number; integer?: boolean }): number {
  const kind = integer ? 'a whole number' : 'a number';
  const range =
    min !== undefined && max !== undefined
      ? ` from ${min} to ${max}`
      : min !== undefined
        ? ` of at least ${min}`
        : max !== undefined
          ? ` of at most ${max}`
          : '';
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(name, `${kind}${range}`, value);
  if ((integer && !Number.isInteger(value)) || (min !== undefined && value < min) || (max !== undefined && value > max)) fail(name, `${kind}${range}`, value);
  return value;
}

export function requiredString(params: Params, name: string, options: { maxLength?: number; allowEmpty?: boolean } = {}): string {
  return checkString(name, requireParameter(params, name, 'a string'), options);
}

export function optionalString(params: Params, name: string, fallback: string, options: { maxLength?: number; allowEmpty?: boolean } = {}): string {
  const value = params[name];
  if (value === undefined || value === null) return fallback;
  return checkString(name, value, options);
}

function checkString(name: string, value: unknown, { maxLength = 10_000, allowEmpty = false }: { maxLength?: number; allowEmpty?: boolean }): string {
  if (typeof value !== 'string') fail(name, 'a string', value);
  if (!allowEmpty && value.length === 0) fail(name, 'a non-empty string', value);
  if (value.length > maxLength) throw new CheckParameterError(name, `\`${name}\` is longer than ${maxLength} characters; shorten it.`);
  return value;
}

export function optionalEnum<T extends string>(params: Params, name: string, allowed: readonly T[], fallback: T): T {
  const value = params[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) fail(name, `one of ${allowed.map((item) => `"${item}"`).join(', ')}`, value);
  return value as T;
}

/** A list of strings; a comma-separated string is accepted too, as configs written for dashboards send one. */
export function stringList(
  params: Params,
  name: string,
  options: { required?: boolean; maxItems?: number; maxLength?: number; allowCommaString?: boolean } = {},
): string[] {
  const { required = false, maxItems = 1_000, maxLength = 1_000, allowCommaString = true } = options;
  let value = params[name];
  if (value === undefined || value === null) {
    if (required) throw new CheckParameterError(name, `\`${name}\` is required: a list of strings.`);
    return [];
  }
  if (allowCommaString && typeof value === 'string')
    value = value
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  if (!Array.isArray(value)) fail(name, 'a list of strings', value);
  if (value.length > maxItems) throw new CheckParameterError(name, `\`${name}\` has ${value.length} items; at most ${maxItems} are allowed.`);
  value.forEach((item, index) => {
    if (typeof item !== 'string' || item.length === 0) fail([name, index], 'a non-empty string', item);
    if (item.length > maxLength) throw new CheckParameterError([name, index], `\`${name}[${index}]\` is longer than ${maxLength} characters; shorten it.`);
  });
  if (required && value.length === 0) throw new CheckParameterError(name, `\`${name}\` must list at least one string.`);
  return value as string[];
}

export function optionalObject(params: Params, name: string): Params | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (!isPlainObject(value)) fail(name, 'an object', value);
  return value;
}

/** Outbound request headers, given as an object or as its JSON text (dashboards store them as text). */
export function headerParameter(params: Params, name = 'headers'): Record<string, string> {
  let value = params[name];
  if (value === undefined || value === null || value === '') return {};
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new CheckParameterError(name, `\`${name}\` is a string that is not JSON; give an object of header names to values.`);
    }
  }
  if (!isPlainObject(value)) fail(name, 'an object of header names to string values', value);
  const headers: Record<string, string> = {};
  for (const [header, headerValue] of Object.entries(value)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header))
      throw new CheckParameterError(
        [name, header],
        `\`${name}\` has a header name HTTP does not allow: ${JSON.stringify(header.slice(0, 100))}; use letters, digits and !#$%&'*+-.^_\`|~.`,
      );
    if (header.toLowerCase() === 'host')
      throw new CheckParameterError([name, header], `\`${name}\` may not set \`host\`: the URL decides where the request goes; remove it.`);
    if (typeof headerValue !== 'string' || /[\r\n\0]/.test(headerValue)) fail([name, header], 'a string without line breaks', headerValue);
    headers[header] = headerValue;
  }
  return headers;
}

/** An http(s) URL. */
export function urlParameter(params: Params, name: string): URL {
  const text = requiredString(params, name, { maxLength: 2_048 });
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new CheckParameterError(name, `\`${name}\` is not a URL: ${JSON.stringify(text)}. Give an absolute http:// or https:// URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CheckParameterError(name, `\`${name}\` must be an http:// or https:// URL; got ${url.protocol}.`);
  if (url.username || url.password) throw new CheckParameterError(name, `\`${name}\` must not carry credentials in the URL; send them in \`headers\`.`);
  return url;
}

/** A user pattern compiled for the linear-time matcher, refused with the parser's reason when it cannot be. */
export function regexParameter(name: string, pattern: string, flags: string): SafeRegex {
  try {
    return compileSafeRegex(pattern, flags);
  } catch (error) {
    if (isRegexSyntaxError(error)) throw new CheckParameterError(name, `\`${name}\` is not a regular expression the gateway can run: it ${error.message}.`);
    throw error;
  }
}
