/**
 * The kit watermark (src/domain/watermark.ts): invisible when rendered (every kit rendered by a
 * CommonMark/GFM renderer gives the original's HTML once the invisible characters are taken out),
 * never inside code, strips back to the original exactly, and read back from whole copies,
 * excerpts, copies that lost their zero-width characters and copies that lost their trailing
 * spaces. A damaged frame is never read as another fingerprint.
 */
import fc from 'fast-check';
import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { embedWatermark, markableLines, readWatermark, stripWatermark, watermarkMatch } from '../../../src/domain/watermark.js';
import { loadKits } from '../../../src/kits.js';

const KITS = loadKits();
const FP_A = '0123456789abcdef';
const FP_B = 'fedcba9876543210';
const ZW = /[\u200B\u200C\u200D\u2060]/g;

/**
 * What a reader sees: the HTML with the invisible characters removed, and a space at the end of a
 * line or before a closing tag dropped. HTML collapses such a space away (it ends a line box), and
 * marked keeps the single trailing space a mark adds in the text instead of trimming it as
 * CommonMark does. Code blocks carry no mark, so <pre> text is compared as it is.
 */
const seen = (md: string) => (marked.parse(md, { async: false }) as string).replace(ZW, '').replace(/ \n/g, '\n').replace(/ <\//g, '</');

describe('invisible', () => {
  it.each(KITS.map((k) => [k.slug, k.markdown]))('%s renders as the original', (_slug, md) => {
    const copy = embedWatermark(md, FP_A);
    expect(copy).not.toBe(md);
    expect(seen(copy)).toBe(seen(md));
  });

  it('puts nothing in code blocks, headings, table rows or bare URLs', () => {
    const md = [
      '# Title',
      '',
      'Prose that may carry a mark.',
      '',
      '```sh',
      'curl -s "$BASE/flow/v1/kits" -H "X-API-Key: $KEY".',
      '```',
      '',
      '| a | b |',
      '|---|---|',
      '| 1 | 2 |',
      '',
      'See https://example.com/docs',
      '',
      'Setext heading',
      '---',
      '',
      '    indented code.',
      '',
      'A `code span',
      'across lines` ends here.',
    ].join('\n');
    const copy = embedWatermark(md, FP_A).split('\n');
    const original = md.split('\n');
    const changed = copy.map((l, i) => (l !== original[i] ? i : -1)).filter((i) => i >= 0);
    expect(changed.map((i) => original[i])).toEqual(['Prose that may carry a mark.']);
    expect(seen(copy.join('\n'))).toBe(seen(md));
  });
});

describe('read back', () => {
  const md = KITS[0]!.markdown;

  it('strips to the original exactly, and two fingerprints give two copies', () => {
    const a = embedWatermark(md, FP_A);
    const b = embedWatermark(md, FP_B);
    expect(a).not.toBe(b);
    expect(stripWatermark(a)).toBe(md);
    expect(stripWatermark(b)).toBe(md);
    expect(readWatermark(a).frames).toEqual([{ fingerprint: FP_A, count: expect.any(Number) }]);
    expect(watermarkMatch(readWatermark(a), FP_A)).toMatchObject({ spaces: true });
    expect(watermarkMatch(readWatermark(a), FP_B)).toEqual({ frames: 0, spaces: false });
    expect(readWatermark(md)).toEqual({ frames: [], space_bits: '0'.repeat(markableLines(md.split('\n')).filter(Boolean).length) });
  });

  it('from the trailing spaces alone (zero-width characters stripped), and from the frames alone (whitespace trimmed)', () => {
    const copy = embedWatermark(md, FP_A);
    const noZw = copy.replace(ZW, '');
    expect(watermarkMatch(readWatermark(noZw), FP_A)).toEqual({ frames: 0, spaces: true });
    expect(watermarkMatch(readWatermark(noZw), FP_B).spaces).toBe(false);
    const trimmed = copy.replace(/ +$/gm, '');
    const m = watermarkMatch(readWatermark(trimmed), FP_A);
    expect(m.frames).toBeGreaterThan(5);
    expect(m.spaces).toBe(false);
  });

  it('from any excerpt of a few paragraphs', () => {
    const lines = embedWatermark(md, FP_A).split('\n');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: lines.length - 15 }), (start) => {
        const excerpt = lines.slice(start, start + 15).join('\n');
        const r = readWatermark(excerpt);
        // An excerpt with any prose carries a frame of its key and no other.
        if (r.frames.length > 0) expect(r.frames.map((f) => f.fingerprint)).toEqual([FP_A]);
        return r.space_bits.length === 0 || r.frames.length > 0;
      }),
      { seed: 13, numRuns: 200 },
    );
  });

  it('a damaged frame is dropped, never read as another key', () => {
    const copy = embedWatermark(md, FP_A);
    let damagedFrames = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: copy.length - 1 }), fc.constantFrom('\u200B', '\u200C', '\u200D', '\u2060', ''), (at, ch) => {
        if (!/[\u200B\u200C\u200D\u2060]/.test(copy[at]!)) return true;
        const damaged = copy.slice(0, at) + ch + copy.slice(at + 1);
        if (damaged !== copy) damagedFrames++;
        return readWatermark(damaged).frames.every((f) => f.fingerprint === FP_A);
      }),
      { seed: 7, numRuns: 300 },
    );
    // The runs did damage frames (about a tenth of the copy is marks).
    expect(damagedFrames).toBeGreaterThan(20);
  });
});
