/** Splits a byte stream into its lines (without their line ends), each with its number from 1. */
export async function* fileLines(content: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): AsyncGenerator<{ text: string; line: number }> {
  let pending = '';
  let line = 0;
  const decoder = new TextDecoder();
  for await (const piece of content) {
    pending += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    let start = 0;
    let end = pending.indexOf('\n');
    while (end !== -1) {
      yield { text: pending.slice(start, end).replace(/\r$/, ''), line: ++line };
      start = end + 1;
      end = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending !== '') yield { text: pending.replace(/\r$/, ''), line: ++line };
}
