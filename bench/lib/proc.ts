/**
 * Process and machine readings from /proc (Linux): CPU time of a process (utime + stime), of this
 * process's reaped children (the load generator), resident memory (VmRSS, VmHWM) and whole-machine
 * CPU. Every reader returns undefined when the process is gone or /proc is not there.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

function clockTicksPerSecond(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    if (Number.isFinite(value) && value > 0) return value;
  } catch {
    // getconf missing: Linux's USER_HZ is 100 on every common architecture.
  }
  return 100;
}

/** `getconf CLK_TCK`: the unit of the CPU times in /proc/<pid>/stat. */
export const CLK_TCK = clockTicksPerSecond();

/** The fields of /proc/<pid>/stat after the command name; index 0 is field 3 (state). */
function statFields(pid: number | 'self'): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU time of a process, in seconds: the sum of its threads' run time from
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds), else utime + stime from /proc/<pid>/stat, which
 * count in clock ticks (10 ms): too coarse for a few dozen requests of a few hundred µs each. A
 * thread that has exited is no longer listed, so a process whose threads come and go reads low;
 * Node's threads (the main one, libuv's pool, V8's helpers) live as long as the process.
 */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  return threadsRunSeconds(pid) ?? statCpuSeconds(pid);
}

function threadsRunSeconds(pid: number): number | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  let ns = 0;
  for (const task of tasks) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read: its time is gone either way.
    }
  }
  return Number.isFinite(ns) && ns > 0 ? ns / 1e9 : undefined;
}

function statCpuSeconds(pid: number): number | undefined {
  const fields = statFields(pid);
  if (!fields) return undefined;
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Every live descendant of a process (children, their children, …), from the ppid field of /proc/<pid>/stat. */
export function descendants(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  const parentOf = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields) parentOf.set(Number(entry), Number(fields[1]));
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [child, ppid] of parentOf) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** The summed CPU seconds of several processes; undefined when none can be read. */
export function totalCpuSeconds(pids: number[]): number | undefined {
  let total: number | undefined;
  for (const pid of pids) {
    const cpu = cpuSeconds(pid);
    if (cpu !== undefined) total = (total ?? 0) + cpu;
  }
  return total;
}

/**
 * cutime + cstime of this process, in seconds: the CPU of every child it has waited for. A child's
 * time is added when it exits, so the difference around a load-generator run is that run's CPU.
 */
export function reapedChildrenCpuSeconds(): number | undefined {
  const fields = statFields('self');
  if (!fields) return undefined;
  return (Number(fields[13]) + Number(fields[14])) / CLK_TCK;
}

export interface Memory {
  /** Resident set now, in MB (10^6 bytes). */
  rssMb: number;
  /** Peak resident set since the process started (VmHWM), in MB. */
  hwmMb: number;
}

export function memory(pid: number | undefined): Memory | undefined {
  if (pid === undefined) return undefined;
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
    const rss = kb('VmRSS');
    const hwm = kb('VmHWM');
    if (!Number.isFinite(rss)) return undefined;
    return { rssMb: (rss * 1024) / 1e6, hwmMb: (hwm * 1024) / 1e6 };
  } catch {
    return undefined;
  }
}

/** Whole-machine CPU counters from /proc/stat (all cores), in clock ticks. */
export interface MachineCpu {
  busy: number;
  total: number;
}

export function machineCpu(): MachineCpu | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    const values = line.trim().split(/\s+/).slice(1, 9).map(Number); // user nice system idle iowait irq softirq steal
    const total = values.reduce((sum, value) => sum + value, 0);
    const idle = values[3] + values[4];
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** Share of all cores that was busy between two readings, 0–1. */
export function busyShare(before: MachineCpu | undefined, after: MachineCpu | undefined): number | undefined {
  if (!before || !after || after.total === before.total) return undefined;
  return (after.busy - before.busy) / (after.total - before.total);
}

export interface Sample {
  /** Seconds since the sampler started. */
  t: number;
  rssMb: number;
}

/**
 * Reads a process's CPU time and resident memory every `intervalMs` while a run goes on, so the
 * last CPU reading and the largest RSS are known even if the process dies before the run ends.
 */
export class Sampler {
  private readonly timer: NodeJS.Timeout;
  private readonly started = performance.now();
  readonly samples: Sample[] = [];
  lastCpu: number | undefined;
  /** `performance.now()` of `lastCpu`. */
  lastCpuAt = 0;
  maxRssMb = 0;

  constructor(
    private readonly pid: number | undefined,
    intervalMs: number,
    private readonly onSample?: (sample: Sample) => void,
  ) {
    this.read();
    this.timer = setInterval(() => this.read(), intervalMs);
  }

  private read(): void {
    const cpu = cpuSeconds(this.pid);
    if (cpu !== undefined) {
      this.lastCpu = cpu;
      this.lastCpuAt = performance.now();
    }
    const mem = memory(this.pid);
    if (!mem) return;
    this.maxRssMb = Math.max(this.maxRssMb, mem.rssMb);
    const sample = { t: (performance.now() - this.started) / 1000, rssMb: mem.rssMb };
    this.samples.push(sample);
    this.onSample?.(sample);
  }

  stop(): void {
    this.read();
    clearInterval(this.timer);
  }
}
