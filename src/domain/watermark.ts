/**
 * The per-key watermark of a kit copy (docs/kits.md, "Watermark"). A copy carries a 64-bit
 * fingerprint of the key that fetched it (an HMAC of the key id under a service secret, computed in
 * src/kits.ts) twice over, in two channels that fail in different ways:
 *
 * - **Zero-width frames.** At the end of every paragraph (and list item) a run of 36 zero-width
 *   characters: the fingerprint's 8 bytes and a CRC-8, two bits per character. They survive
 *   rendering, copying from a browser and most editors; a paragraph copied alone still names its key.
 * - **Trailing spaces.** Line j of the eligible lines ends with one space when bit (j mod 32) of the
 *   fingerprint is 1. A single trailing space is not a hard break in Markdown, so it renders as
 *   nothing; it survives tools that strip zero-width characters (and is lost to editors that trim
 *   whitespace, which keep the frames).
 *
 * Only prose lines carry either mark: never a fenced code block (a command copied from a kit runs as
 * written), a heading (anchors stay the same), a table row, an HTML line, a line ending in a bare
 * URL (an autolink would take the characters into its address) or inside an open code span. So the
 * rendered document is the original's with invisible characters added to text, and
 * stripWatermark(copy) gives back the original byte for byte.
 *
 * Pure: the fingerprint comes in as hex, the caller computes it.
 */

/** Two bits per character, in this order: 00, 01, 10, 11. All four are invisible format characters. */
const SYMBOLS = ['\u200B', '\u200C', '\u200D', '\u2060'] as const;
const SYMBOL_VALUE = new Map<string, number>(SYMBOLS.map((s, i) => [s, i]));
const ZERO_WIDTH = /[\u200B\u200C\u200D\u2060]/g;
const FINGERPRINT_BYTES = 8;
/** Fingerprint bytes plus the check byte, four symbols each. */
const FRAME_SYMBOLS = (FINGERPRINT_BYTES + 1) * 4;
/** The trailing-space channel cycles through the fingerprint's first 32 bits. */
export const SPACE_CYCLE_BITS = 32;

export const isFingerprint = (hex: string): boolean => /^[0-9a-f]{16}$/.test(hex);

/** CRC-8 (polynomial 0x07): a damaged frame is never read as another key's. */
function crc8(bytes: readonly number[]): number {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b;
    for (let i = 0; i < 8; i++) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

const bytesOf = (hex: string): number[] => Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16));
const hexOf = (bytes: readonly number[]): string => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');

function frameOf(fingerprint: string): string {
  const bytes = bytesOf(fingerprint);
  let out = '';
  for (const b of [...bytes, crc8(bytes)]) for (let shift = 6; shift >= 0; shift -= 2) out += SYMBOLS[(b >> shift) & 3];
  return out;
}

/** The fingerprint a run of exactly one frame carries, or null when its check byte fails. */
function fingerprintOfFrame(run: string): string | null {
  const bytes: number[] = [];
  for (let i = 0; i < run.length; i += 4) {
    let b = 0;
    for (let j = 0; j < 4; j++) b = (b << 2) | SYMBOL_VALUE.get(run[i + j]!)!;
    bytes.push(b);
  }
  const check = bytes.pop()!;
  return crc8(bytes) === check ? hexOf(bytes) : null;
}

const FENCE = /^\s*(`{3,}|~{3,})/;
const SETEXT_UNDERLINE = /^ {0,3}(=+|-+)\s*$/;
const LIST_ITEM = /^\s*([-*+]|\d{1,9}[.)])\s/;
/** A prose line may end so; anything else (an emoji a joiner could fuse with, a bracket) carries no mark. */
const SAFE_END = /[\p{L}\p{N}.,;:!?)'"*_`]$/u;

/**
 * Which lines may carry a mark, judged on the text alone (marks removed), so the reader finds the
 * same lines in a copy as the writer did in the original.
 */
export function markableLines(lines: readonly string[]): boolean[] {
  const out = new Array<boolean>(lines.length).fill(false);
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const f = FENCE.exec(line);
    if (f) {
      const marker = f[1]!;
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const t = line.trim();
    if (t === '') continue;
    if (/^( {4,}|\t)/.test(line)) continue; // could be an indented code block
    if (/^#{1,6}(\s|$)/.test(t)) continue; // heading
    if (t.includes('|') || t.startsWith('<')) continue; // table row, HTML
    if (/^([-*_=]\s*)+$/.test(t)) continue; // thematic break, setext underline
    const next = lines[i + 1];
    if (next !== undefined && SETEXT_UNDERLINE.test(next)) continue; // setext heading text
    if (/\s$/.test(line) || line.endsWith('\\')) continue; // a hard break stays one
    if ((line.match(/`/g)?.length ?? 0) % 2 === 1) continue; // inside a code span
    const last = t.split(/\s+/).pop()!;
    if (/:\/\/|^www\./i.test(last)) continue; // a bare URL would swallow the mark
    if (!SAFE_END.test(line)) continue;
    out[i] = true;
  }
  return out;
}

/** The last markable line of a paragraph or list item gets a frame. */
function framedLines(lines: readonly string[], markable: readonly boolean[]): boolean[] {
  return markable.map((m, i) => m && (i + 1 >= lines.length || !markable[i + 1] || LIST_ITEM.test(lines[i + 1]!)));
}

/** The copy of `markdown` for the key whose fingerprint (16 hex digits) is given. */
export function embedWatermark(markdown: string, fingerprint: string): string {
  if (!isFingerprint(fingerprint)) throw new Error('a watermark fingerprint is 16 lower-case hex digits');
  const lines = markdown.split('\n');
  const markable = markableLines(lines);
  const framed = framedLines(lines, markable);
  const frame = frameOf(fingerprint);
  const cycle = bytesOf(fingerprint.slice(0, SPACE_CYCLE_BITS / 4));
  let j = 0;
  return lines
    .map((line, i) => {
      if (!markable[i]) return line;
      const bit = (cycle[(j % SPACE_CYCLE_BITS) >> 3]! >> (7 - (j % 8))) & 1;
      j++;
      return `${line}${framed[i] ? frame : ''}${bit ? ' ' : ''}`;
    })
    .join('\n');
}

/** A copy's lines without marks: zero-width characters gone, and the one space a mark may add. */
function unmarked(copy: string): { lines: string[]; spaced: boolean[] } {
  const raw = copy.replace(ZERO_WIDTH, '').split('\n');
  const spaced = raw.map((l) => l.endsWith(' ') && !l.endsWith('  '));
  return { lines: raw.map((l, i) => (spaced[i] ? l.slice(0, -1) : l)), spaced };
}

/** The original text of a copy: every mark removed. */
export function stripWatermark(copy: string): string {
  const { lines, spaced } = unmarked(copy);
  const markable = markableLines(lines);
  return lines.map((l, i) => (spaced[i] && !markable[i] ? `${l} ` : l)).join('\n');
}

export interface WatermarkReading {
  /** Fingerprints of the zero-width frames whose check byte holds, the most frequent first. */
  frames: { fingerprint: string; count: number }[];
  /** The trailing-space channel: one '0' or '1' per markable line of the copy, in order. */
  space_bits: string;
}

/** What a copy (whole, or an excerpt) says about the key that fetched it. */
export function readWatermark(copy: string): WatermarkReading {
  const counts = new Map<string, number>();
  for (const run of copy.match(/[\u200B\u200C\u200D\u2060]+/g) ?? []) {
    if (run.length !== FRAME_SYMBOLS) continue;
    const fp = fingerprintOfFrame(run);
    if (fp) counts.set(fp, (counts.get(fp) ?? 0) + 1);
  }
  const { lines, spaced } = unmarked(copy);
  const markable = markableLines(lines);
  const frames = [...counts].map(([fingerprint, count]) => ({ fingerprint, count })).sort((a, b) => b.count - a.count || a.fingerprint.localeCompare(b.fingerprint));
  return { frames, space_bits: markable.map((m, i) => (m ? (spaced[i] ? '1' : '0') : '')).join('') };
}

/**
 * Whether a reading names this fingerprint: how many frames carry it, and whether the space bits
 * (at least a whole cycle of them) are its cycle read from some line on (an excerpt starts anywhere).
 */
export function watermarkMatch(reading: WatermarkReading, fingerprint: string): { frames: number; spaces: boolean } {
  const frames = reading.frames.find((f) => f.fingerprint === fingerprint)?.count ?? 0;
  const bits = reading.space_bits;
  if (bits.length < SPACE_CYCLE_BITS || !isFingerprint(fingerprint)) return { frames, spaces: false };
  const cycle = bytesOf(fingerprint.slice(0, SPACE_CYCLE_BITS / 4))
    .map((b) => b.toString(2).padStart(8, '0'))
    .join('');
  let spaces = false;
  for (let offset = 0; offset < SPACE_CYCLE_BITS && !spaces; offset++) {
    spaces = [...bits].every((b, k) => b === cycle[(offset + k) % SPACE_CYCLE_BITS]);
  }
  return { frames, spaces };
}

/** Kit sources must carry no mark of their own, or a copy's reading would be ambiguous. */
export function unmarkableSourceProblem(markdown: string): string | null {
  if (/[\u200B\u200C\u200D\u2060]/.test(markdown)) return 'contains zero-width characters';
  const line = markdown.split('\n').findIndex((l) => /[ \t]$/.test(l));
  return line >= 0 ? `line ${line + 1} ends with whitespace` : null;
}
