/**
 * How operators extend a per-model table the gateway ships (prices, context windows): JSON in an
 * environment variable, then JSON in the file another one names, each merged over what came before.
 * A value that cannot be read is said once on stderr and left out; the table stays usable.
 */
import { readFileSync } from 'node:fs';

export function withOperatorOverrides<Table>(
  defaults: Table,
  variable: string,
  what: string,
  merge: (base: Table, overrides: unknown, source: string) => Table,
): Table {
  let table = defaults;
  const inline = process.env[variable];
  if (inline) table = merge(table, parse(inline, variable, what), variable);
  const fileVariable = `${variable}_FILE`;
  const file = process.env[fileVariable];
  if (file) {
    try {
      table = merge(table, parse(readFileSync(file, 'utf8'), fileVariable, what), fileVariable);
    } catch (error) {
      console.error(`${fileVariable} could not be read; its ${what} are not applied: ${(error as Error).message}`);
    }
  }
  return table;
}

function parse(text: string, source: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    console.error(`${source} is not JSON; its ${what} are not applied.`);
    return {};
  }
}
