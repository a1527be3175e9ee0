/**
 * Dependency rule: src/venues imports only src/domain and itself (plus node built-ins), so a
 * venue never reaches into stores, the API or pipelines. The simulated venues' world lives in
 * src/sim: only the sim adapter (src/venues/sim/) and the registry that builds it reach it, as a
 * real adapter reaches its venue.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const venues = join(root, 'src/venues');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('src/venues dependency rule', () => {
  it('imports only src/domain, itself and node built-ins (the sim adapter and the registry also src/sim)', () => {
    const offenders: string[] = [];
    for (const f of files(venues)) {
      const src = readFileSync(f, 'utf8');
      for (const m of src.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        if (spec.startsWith('node:')) continue;
        if (!spec.startsWith('.')) {
          offenders.push(`${relative(root, f)} → ${spec}`);
          continue;
        }
        const target = relative(root, resolve(dirname(f), spec));
        const from = relative(root, f);
        const simWorld = target.startsWith('src/sim/') && (from.startsWith('src/venues/sim/') || from === 'src/venues/registry.ts');
        if (!target.startsWith('src/venues/') && !target.startsWith('src/domain/') && !simWorld) offenders.push(`${from} → ${target}`);
      }
    }
    expect(offenders).toEqual([]);
    expect(files(venues).length).toBeGreaterThan(5);
  });
});
