/**
 * When a contest is over. A venue reports the end of a game as game_status `final`, or `cancelled`
 * when it will not be played; either way nothing more will trade, so the contest closes: its hot
 * state starts to expire and in-process state about it is dropped.
 */
const CLOSED_GAME_STATUSES: ReadonlySet<string> = new Set(['final', 'cancelled', 'canceled']);

export function isClosedGameStatus(status: string | null | undefined): boolean {
  return typeof status === 'string' && CLOSED_GAME_STATUSES.has(status);
}
