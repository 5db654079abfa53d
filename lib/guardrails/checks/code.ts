import { CheckParameterError } from '../check-types';
import { defineCheck } from '../define-check';
import { scannedText } from '../limits';
import { requiredString } from '../parameters';

/** The `format` values configs use, and the fence tags (```py) that name each. */
const languages: Record<string, readonly string[]> = {
  SQL: ['sql', 'mysql', 'postgresql', 'postgres', 'psql', 'plsql', 'tsql', 'sqlite'],
  Python: ['python', 'py', 'python3', 'py3', 'gyp', 'ipython'],
  TypeScript: ['typescript', 'ts', 'tsx', 'mts', 'cts'],
  JavaScript: ['javascript', 'js', 'jsx', 'mjs', 'cjs', 'node'],
  Java: ['java'],
  'C#': ['c#', 'csharp', 'cs'],
  'C++': ['c++', 'cpp', 'cxx', 'cc', 'hpp'],
  C: ['c', 'h'],
  Ruby: ['ruby', 'rb'],
  PHP: ['php'],
  Swift: ['swift'],
  Kotlin: ['kotlin', 'kt', 'kts'],
  Go: ['go', 'golang'],
  Rust: ['rust', 'rs'],
  Scala: ['scala', 'sc'],
  R: ['r'],
  Perl: ['perl', 'pl'],
  Shell: ['shell', 'sh', 'bash', 'zsh', 'console', 'shellscript', 'ksh', 'fish', 'powershell', 'ps1'],
  HTML: ['html', 'htm', 'xhtml'],
  CSS: ['css', 'scss', 'sass', 'less'],
  XML: ['xml', 'svg', 'xsl'],
  JSON: ['json', 'jsonc', 'json5'],
  YAML: ['yaml', 'yml'],
  Markdown: ['markdown', 'md'],
  Dockerfile: ['dockerfile', 'docker'],
};

const byTag = new Map<string, string>();
for (const [format, tags] of Object.entries(languages)) for (const tag of tags) byTag.set(tag, format);
const formatNames = Object.keys(languages);

// An opening fence and its info string; the info string's first word names the language.
const openingFence = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n]*$/gm;

/** The languages of the fenced code blocks in a text, by the `format` names above (unknown tags as written). */
export function fencedLanguages(text: string): string[] {
  const found = new Set<string>();
  let closing: string | undefined;
  openingFence.lastIndex = 0;
  for (let fence = openingFence.exec(text); fence; fence = openingFence.exec(text)) {
    if (closing !== undefined) {
      // Inside a block only a bare fence of the same kind, at least as long, closes it.
      if (fence[2] === '' && fence[1][0] === closing[0] && fence[1].length >= closing.length) closing = undefined;
      continue;
    }
    closing = fence[1];
    const tag = fence[2].toLowerCase();
    if (tag) found.add(byTag.get(tag) ?? tag);
  }
  return [...found];
}

export const containsCode = defineCheck({
  id: 'default.containsCode',
  sides: ['request', 'response'],
  invertible: true,
  parameters: ['format'],
  parse(params) {
    const requested = requiredString(params, 'format', { maxLength: 40 });
    const format = formatNames.find((name) => name.toLowerCase() === requested.toLowerCase()) ?? byTag.get(requested.toLowerCase());
    if (!format) throw new CheckParameterError('format', `\`format\` must be one of ${formatNames.join(', ')}; got ${JSON.stringify(requested)}.`);
    return { format };
  },
  run({ format }, input) {
    const found = fencedLanguages(scannedText(input.text));
    const verdict = found.includes(format);
    return {
      verdict,
      data: { format, foundFormats: found, explanation: verdict ? `The text has a ${format} code block.` : `The text has no code block tagged as ${format}.` },
    };
  },
});
