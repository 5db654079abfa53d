/** Polls `condition` every 25 ms for up to `timeoutMs` (3 s); its last value. */
export async function eventually(condition: () => boolean, timeoutMs = 3_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return condition();
}
