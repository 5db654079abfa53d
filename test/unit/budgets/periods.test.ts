import { describe, expect, it } from 'vitest';
import { periodAt } from '../../../lib/budgets/periods';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const created = at('2024-01-10T15:30:00Z');

describe('budget periods on the UTC calendar', () => {
  it.each([
    ['2025-01-31T23:59:59.999Z', '2025-01-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z'],
    ['2025-02-01T00:00:00.000Z', '2025-02-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z'],
    ['2024-02-29T12:00:00.000Z', '2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
    ['2025-02-28T23:59:59.999Z', '2025-02-01T00:00:00.000Z', '2025-03-01T00:00:00.000Z'],
    ['2025-12-31T23:00:00.000Z', '2025-12-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
  ])('monthly: %s falls in [%s, %s)', (now, start, end) => {
    const period = periodAt({ periodic_reset: 'monthly', created_at: created }, at(now));
    expect([iso(period.start), iso(period.end)]).toEqual([start, end]);
  });

  it.each([
    // 2025-03-09 is a Sunday, 2025-03-10 a Monday.
    ['2025-03-09T23:59:59.999Z', '2025-03-03T00:00:00.000Z', '2025-03-10T00:00:00.000Z'],
    ['2025-03-10T00:00:00.000Z', '2025-03-10T00:00:00.000Z', '2025-03-17T00:00:00.000Z'],
    ['2025-03-12T08:00:00.000Z', '2025-03-10T00:00:00.000Z', '2025-03-17T00:00:00.000Z'],
    ['2024-12-31T10:00:00.000Z', '2024-12-30T00:00:00.000Z', '2025-01-06T00:00:00.000Z'],
  ])('weekly: %s falls in [%s, %s)', (now, start, end) => {
    const period = periodAt({ periodic_reset: 'weekly', created_at: created }, at(now));
    expect([iso(period.start), iso(period.end)]).toEqual([start, end]);
  });

  it.each([
    [1, '2024-01-10T15:29:00.000Z', '2024-01-10T00:00:00.000Z', '2024-01-11T00:00:00.000Z'],
    [7, '2024-01-16T23:59:59.999Z', '2024-01-10T00:00:00.000Z', '2024-01-17T00:00:00.000Z'],
    [7, '2024-01-17T00:00:00.000Z', '2024-01-17T00:00:00.000Z', '2024-01-24T00:00:00.000Z'],
    // 30 days from 10 January crosses the 29th of February of a leap year: 10 Jan + 30 d = 9 Feb, + 30 d = 10 Mar.
    [30, '2024-03-01T00:00:00.000Z', '2024-02-09T00:00:00.000Z', '2024-03-10T00:00:00.000Z'],
    // 2024 is a leap year: 365 days from 10 January 2024 end on 9 January 2025, not the 10th.
    [365, '2025-01-09T12:00:00.000Z', '2025-01-09T00:00:00.000Z', '2026-01-09T00:00:00.000Z'],
  ])('every %i days from the creation day: %s falls in [%s, %s)', (days, now, start, end) => {
    const period = periodAt({ periodic_reset_days: days, created_at: created }, at(now));
    expect([iso(period.start), iso(period.end)]).toEqual([start, end]);
  });

  it('without a reset rule: one period that never ends', () => {
    expect(periodAt({ created_at: created }, at('2030-01-01T00:00:00Z'))).toEqual({ start: 0, end: undefined });
  });
});
