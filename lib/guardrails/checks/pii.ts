import { isIP } from 'node:net';
import { CheckParameterError } from '../check-types';
import { closestNames } from '../closest-names';
import { defineCheck } from '../define-check';
import { scannedText } from '../limits';
import { optionalBoolean, stringList } from '../parameters';

/**
 * Personal data and secrets found by pattern, with checksums where the format has one (card numbers:
 * Luhn; IBANs: mod 97), so most look-alike numbers are not reported. The patterns are the gateway's
 * own: each can only start a match where its first character cannot continue a previous token (a
 * lookbehind) and its repetitions are bounded or anchored on a literal, so a scan is linear in the text.
 */

export const piiCategories = ['secret', 'email', 'creditCard', 'iban', 'ipAddress', 'phone'] as const;
export type PiiCategory = (typeof piiCategories)[number];

const labels: Record<PiiCategory, string> = {
  secret: '[REDACTED_SECRET]',
  email: '[REDACTED_EMAIL]',
  creditCard: '[REDACTED_CREDIT_CARD]',
  iban: '[REDACTED_IBAN]',
  ipAddress: '[REDACTED_IP_ADDRESS]',
  phone: '[REDACTED_PHONE]',
};

interface Detector {
  pattern: RegExp;
  /** A second look at a candidate (checksum, digit count); true keeps it. */
  accept?: (candidate: string) => boolean;
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** ISO 13616: move the first four characters to the end, letters to 10–35, and the number mod 97 is 1. */
function ibanChecksum(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    remainder = value >= 10 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

const digitsOf = (text: string) => text.replace(/\D/g, '');
const dateLike = /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/;
const dottedQuad = /^\d{1,3}(\.\d{1,3}){3}$/;

const detectors: Record<PiiCategory, Detector[]> = {
  secret: [
    { pattern: /(?<![\w-])sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g }, // OpenAI, Anthropic and look-alikes
    { pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])/g }, // AWS access key ids
    { pattern: /(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}/g }, // GitHub tokens
    { pattern: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}/g },
    { pattern: /(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_-]{20,}/g }, // GitLab
    { pattern: /(?<![A-Za-z0-9_])xox[abposr]-[A-Za-z0-9-]{10,}/g }, // Slack
    { pattern: /(?<![A-Za-z0-9_])AIza[0-9A-Za-z_-]{35}/g }, // Google API keys
    { pattern: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g }, // Stripe
    { pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g }, // JWTs
    { pattern: /(?<![A-Za-z])[Bb]earer[ \t]+[A-Za-z0-9._~+/-]{16,}=*/g },
    // The body's characters exclude '-', so a run ends at the next dash: no backtracking across markers.
    { pattern: /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[A-Za-z0-9+/=\s:,]{0,8000}-----END (?:[A-Z]+ )?PRIVATE KEY-----/g },
  ],
  email: [{ pattern: /(?<![\w.%+-])[A-Za-z0-9][\w.%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}\.){1,8}[A-Za-z]{2,24}(?![\w-])/g }],
  creditCard: [
    {
      pattern: /(?<![\d-])[2-6]\d{3}(?:[ -]?\d){9,15}(?![\d-])/g,
      accept: (candidate) => {
        const digits = digitsOf(candidate);
        return digits.length >= 13 && digits.length <= 19 && luhn(digits);
      },
    },
  ],
  iban: [{ pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])/g, accept: (candidate) => ibanChecksum(candidate.replace(/ /g, '')) }],
  ipAddress: [
    { pattern: /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\d|\.\d)/g },
    // Hex groups and colons, confirmed by the address parser ("12:30:45" is a time, not an address).
    { pattern: /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g, accept: (candidate) => isIP(candidate) === 6 && candidate !== '::' },
  ],
  phone: [
    {
      pattern: /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){1,4}(?!\w)/g,
      // Formatted like a phone number (a country code, an area code in brackets, or two separators)
      // with 7–15 digits, and not a date or a dotted quad: bare digit runs are too often something else.
      accept: (candidate) => {
        const digits = digitsOf(candidate).length;
        if (digits < 7 || digits > 15 || dateLike.test(candidate) || dottedQuad.test(candidate)) return false;
        return candidate.startsWith('+') || candidate.includes('(') || (candidate.match(/[ .-]/g)?.length ?? 0) >= 2;
      },
    },
  ],
};

export interface PiiFinding {
  category: PiiCategory;
  index: number;
  length: number;
}

/** Findings in text order; where two overlap, the category earlier in `piiCategories` keeps the span. */
export function findPii(text: string, categories: readonly PiiCategory[]): PiiFinding[] {
  const findings: PiiFinding[] = [];
  // Characters already inside a finding. Matches of one pattern never overlap each other, so
  // looking at a match's own characters keeps the whole scan linear (a list of findings searched
  // per match was quadratic on a text full of addresses).
  const covered = new Uint8Array(text.length);
  const overlaps = (start: number, end: number) => {
    for (let i = start; i < end; i++) if (covered[i] === 1) return true;
    return false;
  };
  for (const category of piiCategories) {
    if (!categories.includes(category)) continue;
    for (const { pattern, accept } of detectors[category]) {
      pattern.lastIndex = 0;
      for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
        const candidate = match[0];
        if (accept && !accept(candidate)) continue;
        if (overlaps(match.index, match.index + candidate.length)) continue;
        findings.push({ category, index: match.index, length: candidate.length });
        covered.fill(1, match.index, match.index + candidate.length);
      }
    }
  }
  return findings.sort((a, b) => a.index - b.index);
}

export function redactPii(text: string, findings: readonly PiiFinding[]): string {
  let result = '';
  let copied = 0;
  for (const { category, index, length } of findings) {
    result += text.slice(copied, index) + labels[category];
    copied = index + length;
  }
  return result + text.slice(copied);
}

export const pii = defineCheck({
  id: 'default.pii',
  aliases: ['default.detectPII', 'default.piiDetection'],
  mutator: true,
  sides: ['request', 'response'],
  invertible: false,
  parameters: ['categories', 'redact'],
  parse(params) {
    const categories = stringList(params, 'categories');
    categories.forEach((category, index) => {
      if ((piiCategories as readonly string[]).includes(category)) return;
      const close = closestNames(category, piiCategories, 1)[0];
      throw new CheckParameterError(
        ['categories', index],
        `\`categories[${index}]\` is an unknown category ${JSON.stringify(category)}${close ? ` — did you mean "${close}"?` : '.'} Use ${piiCategories.join(', ')}.`,
      );
    });
    return { categories: (categories.length > 0 ? categories : piiCategories) as readonly PiiCategory[], redact: optionalBoolean(params, 'redact', false) };
  },
  run({ categories, redact }, input) {
    const text = scannedText(input.text);
    const findings = findPii(text, categories);
    const counts: Partial<Record<PiiCategory, number>> = {};
    for (const { category } of findings) counts[category] = (counts[category] ?? 0) + 1;
    // The data says where and what kind, never the values: hook results are shown and logged.
    const data = {
      found: counts,
      findings,
      explanation:
        findings.length === 0
          ? 'No personal data or secrets found.'
          : `Found ${findings.length}: ${Object.entries(counts)
              .map(([category, count]) => `${count} ${category}`)
              .join(', ')}${redact ? ', redacted' : ''}.`,
    };
    if (findings.length === 0) return { verdict: true, data };
    if (redact) return { verdict: true, transformedText: redactPii(text, findings), data };
    return { verdict: false, data };
  },
});
