export function time(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return '';
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(value < 10 ? 1 : 0)} ms`;
}

export function usd(value: number | null | undefined): string {
  if (value === null) return 'unpriced';
  if (value === undefined) return '';
  return value === 0 ? '$0' : `$${value < 0.01 ? value.toPrecision(3) : value.toFixed(4)}`;
}

export function count(value: number | null | undefined): string {
  return value === null || value === undefined ? '' : value.toLocaleString();
}

/** A status's class, for its colour. */
export const statusClass = (status: number) => (status >= 500 ? 'bad' : status >= 400 ? 'warn' : status === 0 ? 'warn' : 'good');
