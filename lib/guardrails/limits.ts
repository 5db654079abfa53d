/**
 * The most text a check scans. Every matcher here is linear in the text, so this bounds CPU rather
 * than guarding against pathological patterns; it sits well above what one message holds in
 * practice (request bodies stop at 4 MB). A longer text is an error: in a hook that denies, the
 * check fails whatever its `failOnError` (a deny hook never passes text it did not read);
 * elsewhere `failOnError` decides.
 */
export const maxScannedText = 1_000_000;

/** The text is longer than a check reads, so the check did not judge all of it. */
export class TextTooLongError extends Error {
  constructor(readonly length: number) {
    super(`The text is ${length} characters long; checks scan at most ${maxScannedText}.`);
    this.name = 'TextTooLongError';
  }
}

export function scannedText(text: string): string {
  if (text.length > maxScannedText) throw new TextTooLongError(text.length);
  return text;
}
