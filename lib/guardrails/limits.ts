/**
 * The most text a check scans. Every matcher here is linear in the text, so this bounds CPU rather
 * than guarding against pathological patterns; it sits well above what one message holds in
 * practice (request bodies stop at 4 MB). A longer text is an error, so `failOnError` decides.
 */
export const maxScannedText = 1_000_000;

export function scannedText(text: string): string {
  if (text.length > maxScannedText) throw new Error(`The text is ${text.length} characters long; checks scan at most ${maxScannedText}.`);
  return text;
}
