/**
 * A budget's periods, on the UTC calendar: `monthly` starts on the 1st at 00:00, `weekly` on Monday
 * at 00:00, and `periodic_reset_days` every N days from 00:00 of the day the budget was created.
 * Without a reset rule the budget has one period that never ends.
 */
import type { PeriodicReset } from '../store/usage-limit-policies';

const dayMs = 86_400_000;

export interface ResetRule {
  periodic_reset?: PeriodicReset;
  periodic_reset_days?: number;
  created_at: number;
}

export interface Period {
  start: number;
  /** When the next period starts (the next reset); undefined when the budget never resets. */
  end: number | undefined;
}

export function periodAt(rule: ResetRule, now: number): Period {
  if (rule.periodic_reset === 'monthly') {
    const date = new Date(now);
    // Date.UTC carries month 12 into January of the next year.
    return { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) };
  }
  if (rule.periodic_reset === 'weekly') {
    const midnight = Math.floor(now / dayMs) * dayMs;
    const daysSinceMonday = (new Date(now).getUTCDay() + 6) % 7;
    const start = midnight - daysSinceMonday * dayMs;
    return { start, end: start + 7 * dayMs };
  }
  if (rule.periodic_reset_days !== undefined) {
    // UTC days have no daylight-saving changes, so N days are always N × 24 h.
    const anchor = Math.floor(rule.created_at / dayMs) * dayMs;
    const length = rule.periodic_reset_days * dayMs;
    const start = anchor + Math.max(0, Math.floor((now - anchor) / length)) * length;
    return { start, end: start + length };
  }
  return { start: 0, end: undefined };
}
