import { describe, expect, it } from 'vitest';
import { COST_TABLE_END, COST_TABLE_START, replaceBetweenMarkers } from '../../../scripts/size/write-readme';

describe('the README cost table rewrite', () => {
  const readme = `# Title\n\n## What it costs\n\n${COST_TABLE_START}\nold table\n${COST_TABLE_END}\n\nAfter.\n`;

  it('replaces only what lies between the markers', () => {
    const written = replaceBetweenMarkers(readme, '\n| a | b |\n| - | - |\n');
    expect(written).toBe(`# Title\n\n## What it costs\n\n${COST_TABLE_START}\n| a | b |\n| - | - |\n${COST_TABLE_END}\n\nAfter.\n`);
    // Writing the same table again changes nothing.
    expect(replaceBetweenMarkers(written, '| a | b |\n| - | - |')).toBe(written);
  });

  it('refuses a file without both markers, or with two tables', () => {
    expect(() => replaceBetweenMarkers('# Title\n', 'x')).toThrow(/marker/);
    expect(() => replaceBetweenMarkers(`${COST_TABLE_START}\n`, 'x')).toThrow(/marker/);
    expect(() => replaceBetweenMarkers(`${readme}${readme}`, 'x')).toThrow(/more than one/);
  });
});
