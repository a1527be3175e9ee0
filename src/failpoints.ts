/**
 * Failpoints for kill tests: `failpoint('history.after-insert')` kills the process with SIGKILL at
 * once when FLOW_FAILPOINTS (a comma-separated list) names it, so a test can stop a process at an
 * exact step and check that a restart loses nothing and doubles nothing. `name@N` dies at the Nth
 * time the point is reached instead of the first (to die in the middle of a stream of jobs).
 * Unset in production: the check is one size test.
 */
const armed = new Map<string, number>();
for (const raw of (process.env.FLOW_FAILPOINTS ?? '').split(',')) {
  const s = raw.trim();
  if (!s) continue;
  const at = s.lastIndexOf('@');
  const n = at > 0 ? Number(s.slice(at + 1)) : 1;
  armed.set(at > 0 ? s.slice(0, at) : s, Number.isInteger(n) && n > 0 ? n : 1);
}

/** Dies here (SIGKILL: no cleanup, no flush) when FLOW_FAILPOINTS names this point (at its Nth hit). */
export function failpoint(name: string): void {
  if (armed.size === 0) return;
  const left = armed.get(name);
  if (left === undefined) return;
  if (left <= 1) process.kill(process.pid, 'SIGKILL');
  else armed.set(name, left - 1);
}
