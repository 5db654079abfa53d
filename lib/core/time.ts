/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The longest a request may wait on its provider: the inference functions' own timeout (900 s in
 * serverless.yml). A longer request timeout could never fire before Lambda stops the function, and
 * past 2³¹ ms Node's timers would fire at once.
 */
export const maxRequestTimeoutMs = 900_000;
