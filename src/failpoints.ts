/**
 * Failpoints for kill tests: `failpoint('history.after-insert')` kills the process with SIGKILL at
 * once when FLOW_FAILPOINTS (a comma-separated list) names it, so a test can stop a process at an
 * exact step and check that a restart loses nothing and doubles nothing. Unset in production: the
 * check is one Set lookup.
 */
const armed: ReadonlySet<string> = new Set(
  (process.env.FLOW_FAILPOINTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** Dies here (SIGKILL: no cleanup, no flush) when FLOW_FAILPOINTS names this point. */
export function failpoint(name: string): void {
  if (armed.size > 0 && armed.has(name)) process.kill(process.pid, 'SIGKILL');
}
