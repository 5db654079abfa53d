/** Plain-text tables and cell formats for the benchmark's printed report. */

export type Cell = string | number | undefined;

export interface Column {
  title: string;
  /** Right-align (numbers). Default: true except for the first column. */
  right?: boolean;
}

/** Formats rows under a header, columns padded to their widest cell; `–` for missing values. */
export function table(columns: Column[], rows: Cell[][]): string {
  const text = rows.map((row) => columns.map((_, i) => (row[i] === undefined || row[i] === '' ? '–' : String(row[i]))));
  const widths = columns.map((column, i) => Math.max(width(column.title), ...text.map((row) => width(row[i]))));
  const pad = (value: string, i: number) => {
    const right = columns[i].right ?? i > 0;
    const space = ' '.repeat(widths[i] - width(value));
    return right ? space + value : value + space;
  };
  const lines = [columns.map((column, i) => pad(column.title, i)).join('  '), widths.map((w) => '─'.repeat(w)).join('  ')];
  for (const row of text) lines.push(row.map(pad).join('  '));
  return lines.map((line) => line.trimEnd()).join('\n');
}

/** Display width: code points (the tables use ✓ ✗ µ – and box lines, all one column wide). */
function width(text: string): number {
  return Array.from(text).length;
}

/** A number with a fixed count of decimals, or undefined. */
export function fixed(value: number | undefined, decimals: number): string | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  return value.toFixed(decimals);
}

/** Thousands separators, no decimals. */
export function count(value: number | undefined): string | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  return Math.round(value).toLocaleString('en-US');
}

/** A latency in ms: µs precision below 10 ms, then fewer decimals. */
export function ms(value: number | undefined): string | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  if (Math.abs(value) < 10) return value.toFixed(3);
  if (Math.abs(value) < 100) return value.toFixed(2);
  return value.toFixed(1);
}

/** A signed difference in ms. */
export function signedMs(value: number | undefined): string | undefined {
  const text = ms(value);
  return text === undefined ? undefined : value! >= 0 ? `+${text}` : text;
}

export function mark(pass: boolean | undefined): string {
  return pass === undefined ? '–' : pass ? '✓' : '✗';
}
