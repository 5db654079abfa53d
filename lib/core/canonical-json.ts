/**
 * JSON with object keys sorted at every level and undefined members left out, so two values that
 * mean the same hash the same whatever order their properties were written in. Built by appending
 * to one string (no arrays of parts): it runs on every cached request's body.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ',';
      const item: unknown = value[index];
      out += item === undefined ? 'null' : canonicalJson(item);
    }
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const member = record[key];
    if (member === undefined) continue;
    if (!first) out += ',';
    first = false;
    out += `${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return out + '}';
}
