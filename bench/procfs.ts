/**
 * CPU time and memory of a process tree, and per-core busy time, read from
 * /proc. A tree, because nginx serves from a worker child of its master and
 * the gateway may start helpers; threads are already inside their process.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // the process exited between listing and reading
  }
}

/** Cores, CPU model, memory and kernel, for a report. */
export function machine(): string {
  const cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? '?';
  return `${os.cpus().length} cores (nproc), ${cpuModel}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Linux ${os.release()}`;
}

/** `pid` and all its descendants (children of any of its threads). */
export function processTree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    const p = pids[i] as number;
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      const kids = read(`/proc/${p}/task/${task}/children`) ?? '';
      for (const kid of kids.split(' ')) if (kid.trim()) pids.push(Number(kid));
    }
  }
  return pids;
}

/** User + system CPU seconds consumed so far by the processes. */
export function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const stat = read(`/proc/${pid}/stat`);
    if (!stat) continue;
    // The command name may hold spaces and parentheses: count fields after its closing ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
  }
  return ticks / CLK_TCK;
}

/** Sum of a /proc/<pid>/status memory field (VmRSS: now, VmHWM: peak) in MiB. */
export function memMiB(pids: number[], field: 'VmRSS' | 'VmHWM'): number {
  let kib = 0;
  const re = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm');
  for (const pid of pids) {
    const m = re.exec(read(`/proc/${pid}/status`) ?? '');
    if (m) kib += Number(m[1]);
  }
  return kib / 1024;
}

export interface CoreTimes {
  /** Seconds not idle (nor waiting for I/O). */
  busy: number;
  total: number;
}

/** Time per core from /proc/stat, indexed by core number. */
export function coreTimes(): CoreTimes[] {
  const cores: CoreTimes[] = [];
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const m = /^cpu(\d+) (.*)$/.exec(line);
    if (!m) continue;
    const v = (m[2] ?? '').trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    cores[Number(m[1])] = { busy: (total - (v[3] ?? 0) - (v[4] ?? 0)) / CLK_TCK, total: total / CLK_TCK };
  }
  return cores;
}

export function coreDelta(before: CoreTimes[], after: CoreTimes[]): CoreTimes[] {
  return after.map((a, i) => ({ busy: a.busy - (before[i]?.busy ?? 0), total: a.total - (before[i]?.total ?? 0) }));
}

/** Samples the tree's RSS every `intervalMs` and keeps the peak. */
export class RssSampler {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs = 100,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    this.peak = Math.max(this.peak, memMiB(processTree(this.pid), 'VmRSS'));
  }

  /** Stops sampling; returns the peak RSS in MiB. */
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.peak;
  }
}
