/** Replaces what lies between two marker comments of a Markdown file, markers kept. */

export const COST_TABLE_START = '<!-- cost-table:start -->';
export const COST_TABLE_END = '<!-- cost-table:end -->';

export function replaceBetweenMarkers(text: string, content: string, start = COST_TABLE_START, end = COST_TABLE_END): string {
  const from = text.indexOf(start);
  if (from === -1) throw new Error(`no ${start} marker`);
  const to = text.indexOf(end, from + start.length);
  if (to === -1) throw new Error(`no ${end} marker after ${start}`);
  if (text.indexOf(start, from + start.length) !== -1) throw new Error(`more than one ${start} marker`);
  const body = content.replace(/^\n+|\n+$/g, '');
  return `${text.slice(0, from + start.length)}\n${body}\n${text.slice(to)}`;
}
