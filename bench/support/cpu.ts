/**
 * Where a bench's CPU went (Linux): the CPU time of given processes and of the whole machine, read
 * from /proc, so a run can say how much of a core its client, its server, and everything else
 * (PostgreSQL, Redis, and whatever else runs on the machine) used per operation.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of /proc's CPU times; 100 on every Linux build that matters here. */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system) of process `pid` so far, in ms; NaN once it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3 on: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** Busy CPU time of the whole machine so far (every core; idle and iowait left out), in ms. */
export function machineBusyMs(): number {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
  return ((total - cpu[3]! - cpu[4]!) * 1000) / TICKS_PER_SECOND;
}

/**
 * A snapshot of the named processes' CPU and the machine's; `since` gives each one's ms used since.
 * A name may stand for several processes (the sum of what each used while it ran in between), e.g.
 * the PostgreSQL backends serving one database.
 */
export class CpuMeter {
  private readonly start: Map<string, number[]>;
  constructor(private readonly pids: Record<string, number | readonly number[]>) {
    this.start = this.read();
  }

  private read(): Map<string, number[]> {
    const m = new Map(Object.entries(this.pids).map(([name, pid]) => [name, (typeof pid === 'number' ? [pid] : pid).map(processCpuMs)] as const));
    m.set('machine', [machineBusyMs()]);
    return m;
  }

  /** ms of CPU each named process (NaN when a single one is gone), and the machine ('machine'), used since this meter was made. */
  since(): Map<string, number> {
    const now = this.read();
    return new Map(
      [...now].map(([k, v]) => {
        const before = this.start.get(k)!;
        const used = v.map((x, i) => x - before[i]!);
        return [k, used.length === 1 ? used[0]! : used.reduce((sum, x) => sum + (Number.isFinite(x) ? x : 0), 0)] as const;
      }),
    );
  }
}
