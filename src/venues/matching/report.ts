/** The match report as text (`flow venues matches` without --json). */
import type { MatchDecision, MatchReport } from './types.js';

const ORDER: MatchDecision['decision'][] = ['matched', 'low_confidence', 'unmatched', 'separate'];

export function formatMatchReport(r: MatchReport): string {
  const lines: string[] = [];
  lines.push(`venues: ${r.venues.join(', ') || '(none)'}`);
  lines.push(
    `contests: ${r.contests}  matched: ${r.matched}  low confidence: ${r.low_confidence}  unmatched: ${r.unmatched}  ` +
      `merged contests: ${r.merged_contests}  positions on 2+ venues: ${r.aligned_positions}  (threshold ${r.threshold})`,
  );
  for (const kind of ORDER) {
    const ds = r.decisions.filter((d) => d.decision === kind);
    if (ds.length === 0) continue;
    lines.push('', `${kind.replace('_', ' ')} (${ds.length}):`);
    for (const d of ds) {
      const conf = d.confidence === null ? '' : ` [${d.confidence.toFixed(2)}]`;
      lines.push(`  ${d.partner_id} ${d.contest_id}${conf}  ${JSON.stringify(d.title)}`);
      if (d.merged_into) lines.push(`      → ${d.merged_into} (${d.by}); positions aligned ${d.positions.aligned}, own ${d.positions.mapped}, unlinked ${d.positions.unlinked}, kept apart ${d.positions.loose}`);
      lines.push(`      ${d.reason}`);
      // A ruled-out candidate is in the reason already.
      if (d.decision !== 'matched' && d.candidate && !d.candidate.detail.veto) {
        const c = d.candidate;
        lines.push(`      best candidate: ${c.partner_id} ${c.contest_id} ${JSON.stringify(c.title)} score ${c.detail.score} (participants ${c.detail.participants}, time ${c.detail.time}, title ${c.detail.title})`);
      }
    }
  }
  if (r.warnings.length) lines.push('', 'warnings:', ...r.warnings.map((w) => `  ${w}`));
  return lines.join('\n');
}
