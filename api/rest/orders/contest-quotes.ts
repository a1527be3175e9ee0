/**
 * The venue quotes of each position of a contest, as a practice leg is priced on them: the contest's
 * liquidity document in the hot state (liq:<contest>, the compute role's Position[]), parsed once per
 * document. Every read still fetches the document, so a leg is priced on what is stored at that
 * moment, exactly as a fresh parse would price it; only a document equal to the one parsed last for
 * the contest is not parsed again (the documents run to tens of KiB, parsing one per buy cost more
 * than the rest of planning).
 *
 * Bounded by size: the last document and its parse per contest, at most maxBytes of document text
 * in all, least recently read out first.
 */
import { LRUCache } from 'lru-cache';
import type { PartnerLiquidity } from '../../../src/domain/stream.js';
import type { HotState } from '../../../src/store/redis/hot.js';

/** position_hash → its venue quotes. Shared between reads: never modified. */
export type PositionQuotes = ReadonlyMap<string, readonly PartnerLiquidity[]>;

const NONE: PositionQuotes = new Map();
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

export class ContestQuotes {
  private readonly parsed: LRUCache<string, { json: string; positions: PositionQuotes }>;

  constructor(
    private readonly hot: Pick<HotState, 'liquidity'>,
    maxBytes = DEFAULT_MAX_BYTES,
  ) {
    // The parse takes a few times the text's size: counted as twice it, the text once more.
    this.parsed = new LRUCache({ maxSize: maxBytes, sizeCalculation: (v) => Math.max(1, v.json.length * 3) });
  }

  /** The contest's positions and their quotes as stored now; empty when nothing is stored. */
  async of(contestId: string): Promise<PositionQuotes> {
    const json = await this.hot.liquidity(contestId);
    if (json === null) return NONE;
    const hit = this.parsed.get(contestId);
    if (hit !== undefined && hit.json === json) return hit.positions;
    const list = JSON.parse(json) as { position_hash: string; partner_liquidities: PartnerLiquidity[] }[];
    const positions: PositionQuotes = new Map(list.map((x) => [x.position_hash, x.partner_liquidities]));
    this.parsed.set(contestId, { json, positions });
    return positions;
  }

  get size(): number {
    return this.parsed.size;
  }
}
