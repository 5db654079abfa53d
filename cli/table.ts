/** A column of a table: a field of each row, or a value worked out from the row. */
export interface Column {
  header: string;
  value: (row: Record<string, unknown>) => unknown;
}

const maxCellWidth = 60;

/** A field by name; dotted names reach into nested objects (`usage.total_tokens`). */
export function field(name: string, header = name): Column {
  return {
    header,
    value: (row) => name.split('.').reduce<unknown>((value, part) => (value && typeof value === 'object' ? (value as any)[part] : undefined), row),
  };
}

/**
 * A value as a person reads it in a cell: times the API gives in epoch seconds become UTC
 * timestamps, absent values a dash, nested values compact JSON cut to a width a terminal holds.
 */
export function cell(value: unknown, header = '', maxWidth = maxCellWidth): string {
  if (value === null || value === undefined || value === '') return '-';
  if (typeof value === 'number' && /_at$/.test(header) && value > 1e9 && value < 1e11) return new Date(value * 1000).toISOString().replace('.000Z', 'Z');
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  const line = text.replace(/\s+/g, ' ');
  return line.length > maxWidth ? `${line.slice(0, maxWidth - 1)}…` : line;
}

/**
 * Rows under a header, each column as wide as its widest cell; no trailing spaces. `widths`, when
 * given, holds the widths of earlier tables and keeps growing, so tables printed one after another
 * (as `logs tail` does) stay aligned with the first.
 */
export function renderTable(rows: Record<string, unknown>[], columns: Column[], widths: number[] = []): string {
  const lines = [columns.map((column) => column.header.toUpperCase()), ...rows.map((row) => columns.map((column) => cell(column.value(row), column.header)))];
  columns.forEach((_, index) => {
    widths[index] = Math.max(widths[index] ?? 0, ...lines.map((line) => line[index].length));
  });
  return lines
    .map((line) =>
      line
        .map((text, index) => text.padEnd(widths[index]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One object as `field  value` lines, in the order the API gave them, each value whole: one object is read closely. */
export function renderRecord(record: Record<string, unknown>): string {
  const names = Object.keys(record);
  const width = Math.max(0, ...names.map((name) => name.length));
  return names.map((name) => `${name.padEnd(width)}  ${cell(record[name], name, Number.POSITIVE_INFINITY)}`.trimEnd()).join('\n');
}
