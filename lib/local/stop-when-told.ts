/**
 * How the long-running local processes (`npm start`'s gateway, `npm run emulators`) are told to
 * stop, and how long stopping may take.
 *
 * - SIGINT (Ctrl-C), SIGTERM (`kill`, a process manager) and SIGHUP (the terminal closed) start an
 *   orderly stop; the first one counts, later ones change nothing. A Ctrl-C in a terminal reaches
 *   npm, this process and its children at once, and npm forwards it again, so a second SIGINT
 *   within milliseconds is the same request, not an impatient user.
 * - Stopping is bounded: past `deadlineMs` the process exits anyway, with code 1 and a line on
 *   stderr, so that whoever sent the signal never waits on a client or a stuck write.
 * - Under an npm script (npm sets `npm_lifecycle_event` for the script and everything it starts),
 *   the process also stops when its parent exits: npm forwards SIGINT and SIGTERM to its child,
 *   but an npm that is killed outright (SIGKILL, a crash) forwards nothing, and this process would
 *   be left holding its ports. Outside npm a process may be started in the background on purpose
 *   (`node .build/local/main.mjs &` from a script that then ends), so there it is left alone.
 */

/** The signals that ask a local process to stop. */
export const stopSignals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export interface StopWhenToldOptions {
  /** Names the process in messages (e.g. `emulators`). */
  name: string;
  /** Stops what the process runs; the process exits with 0 when it resolves, 1 when it rejects. */
  stop: (reason: string) => Promise<void>;
  /** How long stopping may take before the process exits anyway. */
  deadlineMs: number;
}

/** How often the parent is checked: a fraction of the stop budget, and a getppid call is cheap. */
const parentCheckMs = 250;

/**
 * Installs the handlers; returns the function that starts stopping, for other reasons to stop
 * (an IPC channel that closes). Call it once the process runs what `stop` stops.
 */
export function stopWhenTold(options: StopWhenToldOptions): (reason: string) => void {
  let stopping = false;
  const begin = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    // Not unref'd: should stopping hang with nothing else keeping the process alive, this still ends it.
    setTimeout(() => {
      process.stderr.write(`${options.name}: not stopped ${options.deadlineMs / 1000} s after ${reason}; exiting now.\n`);
      process.exit(1);
    }, options.deadlineMs);
    options.stop(reason).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`${options.name}: error while stopping after ${reason}: ${String((error as Error)?.stack ?? error)}\n`);
        process.exit(1);
      },
    );
  };
  for (const signal of stopSignals) process.on(signal, () => begin(signal));

  if (process.env.npm_lifecycle_event !== undefined) {
    const parent = process.ppid;
    const watch = setInterval(() => {
      if (process.ppid === parent) return;
      clearInterval(watch);
      begin(`the exit of its parent (pid ${parent})`);
    }, parentCheckMs);
    // The check alone never keeps the process alive.
    watch.unref();
  }
  return begin;
}
