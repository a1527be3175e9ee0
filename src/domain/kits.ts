/**
 * Kits (spec "Kit"; docs/kits.md): guides to this service, one Markdown file each under kits/, read
 * with GET /flow/v1/kits/:slug by a key holding kit:<slug>. A kit file starts with a front matter
 * block of `name: value` lines:
 *
 *   ---
 *   title: Streaming with resume
 *   version: 1
 *   summary: One sentence for the catalog.
 *   companion_entitlements: stream:realtime, trades:read
 *   ---
 *
 * The slug is the file name. Pure: the files are read by src/kits.ts.
 */
import { canonicalEntitlement } from './plans.js';
import { unmarkableSourceProblem } from './watermark.js';

/** Lower-case words joined by single hyphens, at most 64 characters. */
export const KIT_SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const KIT_SLUG_MAX = 64;
export const isKitSlug = (s: string): boolean => s.length <= KIT_SLUG_MAX && KIT_SLUG.test(s);
export const kitEntitlement = (slug: string): string => `kit:${slug}`;

export interface KitDefinition {
  slug: string;
  title: string;
  /** Raised whenever the guide changes in substance (spec "Kits carry an integer version"). */
  version: number;
  summary: string;
  entitlement: string;
  /** What a reader needs to follow the guide, beyond the kit itself. */
  companion_entitlements: string[];
  /** The guide, front matter removed. */
  markdown: string;
}

/** A catalog entry (spec "Kit"), as one key sees it. */
export interface KitEntry {
  slug: string;
  title: string;
  version: number;
  summary: string;
  entitlement: string;
  companion_entitlements: string[];
  entitled: boolean;
}

/** A kit with content: the entry plus the key's watermarked copy. */
export interface KitContent extends KitEntry {
  markdown: string;
  generated_at: string;
  missing_companion_entitlements: string[];
}

export class KitFormatError extends Error {}

const FIELDS = new Set(['title', 'version', 'summary', 'companion_entitlements']);

/** A kit file's definition; a malformed file is refused with what is wrong, so a bad kit never ships. */
export function parseKit(slug: string, text: string): KitDefinition {
  const where = `kit ${JSON.stringify(slug)}`;
  if (!isKitSlug(slug)) throw new KitFormatError(`${where}: the file name must be a slug (lower-case words joined by hyphens, at most ${KIT_SLUG_MAX} characters)`);
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!m) throw new KitFormatError(`${where}: the file must open with a front matter block between --- lines`);
  const fields = new Map<string, string>();
  for (const line of m[1]!.split('\n')) {
    const kv = /^([a-z_]+):\s*(.*)$/.exec(line);
    if (!kv || !FIELDS.has(kv[1]!)) throw new KitFormatError(`${where}: front matter line ${JSON.stringify(line)} is not one of ${[...FIELDS].join(', ')}`);
    fields.set(kv[1]!, kv[2]!.trim());
  }
  const title = fields.get('title') ?? '';
  const summary = fields.get('summary') ?? '';
  const version = Number(fields.get('version'));
  if (!title || !summary) throw new KitFormatError(`${where}: title and summary are required`);
  if (!Number.isInteger(version) || version < 1) throw new KitFormatError(`${where}: version must be a positive integer`);
  const companions = (fields.get('companion_entitlements') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(canonicalEntitlement);
  const markdown = text.slice(m[0].length);
  const problem = unmarkableSourceProblem(markdown);
  if (problem) throw new KitFormatError(`${where}: the guide ${problem}; a watermark could not be read back`);
  if (!markdown.trim()) throw new KitFormatError(`${where}: the guide is empty`);
  return { slug, title, version, summary, entitlement: kitEntitlement(slug), companion_entitlements: [...new Set(companions)], markdown };
}

export function kitEntry(kit: KitDefinition, held: ReadonlySet<string>): KitEntry {
  return {
    slug: kit.slug,
    title: kit.title,
    version: kit.version,
    summary: kit.summary,
    entitlement: kit.entitlement,
    companion_entitlements: [...kit.companion_entitlements],
    entitled: held.has(kit.entitlement),
  };
}

export function missingCompanions(kit: KitDefinition, held: ReadonlySet<string>): string[] {
  return kit.companion_entitlements.filter((e) => !held.has(e));
}
