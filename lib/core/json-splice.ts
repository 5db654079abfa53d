/**
 * A JSON object's text with one more member, given as JSON text, at its end. For a field added to
 * text that is already serialised (an answer read and checked once, a log line): the field costs
 * its own serialisation, not the whole object's again.
 */
export function withRawJsonField(objectText: string, name: string, rawJson: string): string {
  const start = objectText.indexOf('{');
  const end = objectText.lastIndexOf('}');
  if (start < 0 || end < start) throw new Error(`Not a JSON object: ${objectText.slice(0, 40)}`);
  const empty = objectText.slice(start + 1, end).trim() === '';
  return `${objectText.slice(0, end)}${empty ? '' : ','}${JSON.stringify(name)}:${rawJson}${objectText.slice(end)}`;
}
