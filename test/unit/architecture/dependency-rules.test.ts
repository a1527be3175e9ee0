/**
 * The dependency rules `npm run depcheck` enforces (.dependency-cruiser.cjs, from the architecture's
 * "who may import whom") catch what they are meant to: a small tree laid out like the repo, with one
 * forbidden import per rule and the allowed imports next to them, is cruised with the repo's own
 * rules; exactly the forbidden ones are reported, each under its rule.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { cruise } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const rules = require('../../../.dependency-cruiser.cjs') as { forbidden: unknown[] };

/** file → the files it imports (paths from the tree's root). */
const TREE: Record<string, string[]> = {
  'src/domain/d.ts': [],
  'src/errors.ts': [],
  'src/venues/types.ts': [],
  'src/venues/errors.ts': [],
  'src/venues/kalshi/k.ts': ['src/venues/types.ts'],
  'src/venues/registry.ts': ['src/venues/sim/index.ts', 'src/sim/model.ts'],
  'src/venues/sim/index.ts': ['src/sim/model.ts'],
  'src/venues/v.ts': ['src/store/redis/s.ts'], // forbidden: venues → store
  'src/store/redis/s.ts': ['src/domain/d.ts'],
  'src/store/pg/p.ts': ['src/venues/types.ts'], // forbidden: store → venues
  'src/store/pg/q.ts': ['src/sim/model.ts'], // forbidden: store → sim
  'src/sim/model.ts': ['src/domain/d.ts', 'src/venues/types.ts', 'src/venues/errors.ts', 'src/errors.ts'],
  'src/sim/bad.ts': ['src/venues/kalshi/k.ts'], // forbidden: the world reaches an adapter
  'src/compute/c.ts': ['src/domain/d.ts'],
  'src/other.ts': ['src/sim/model.ts'], // forbidden: the world reached from elsewhere in src
  'pipelines/queues.ts': [],
  'pipelines/producers/p.ts': ['pipelines/queues.ts'],
  'pipelines/ingest/i.ts': ['src/sim/model.ts'],
  'api/ok.ts': ['pipelines/producers/p.ts', 'pipelines/queues.ts', 'src/store/redis/s.ts', 'src/sim/model.ts'],
  'api/bad.ts': ['pipelines/ingest/i.ts'], // forbidden: api → pipelines beyond producers
  'test/t.ts': ['bench/b.ts', 'api/ok.ts'],
  'bench/b.ts': ['src/domain/d.ts'],
  'bench/bad.ts': ['test/t.ts'], // forbidden: bench → test
};

const root = mkdtempSync(join(tmpdir(), 'flow-depcheck-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function layOut(): void {
  for (const [file, imports] of Object.entries(TREE)) {
    const path = join(root, file);
    mkdirSync(dirname(path), { recursive: true });
    const lines = imports.map((to, i) => {
      let rel = join(...Array(file.split('/').length - 1).fill('..'), to).replace(/\.ts$/, '.js');
      if (!rel.startsWith('.')) rel = './' + rel;
      return `import { x as x${i} } from '${rel}';\nvoid x${i};`;
    });
    writeFileSync(path, `${lines.join('\n')}\nexport const x = 1;\n`);
  }
}

describe('the dependency rules', () => {
  it('report exactly the forbidden imports, each under its rule', async () => {
    layOut();
    const cwd = process.cwd();
    process.chdir(root);
    let found: string[];
    try {
      const r = await cruise(['src', 'pipelines', 'api', 'bench', 'test'], {
        ruleSet: { forbidden: rules.forbidden } as never,
        validate: true,
        doNotFollow: { path: 'node_modules' },
        tsPreCompilationDeps: true,
        enhancedResolveOptions: { extensions: ['.ts', '.js'] },
      });
      const out = r.output as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } };
      found = out.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    } finally {
      process.chdir(cwd);
    }
    expect(found).toEqual(
      [
        'api-uses-producers-only: api/bad.ts → pipelines/ingest/i.ts',
        'bench-not-test: bench/bad.ts → test/t.ts',
        'sim-world-below-its-adapter: src/sim/bad.ts → src/venues/kalshi/k.ts',
        'sim-world-through-its-adapter: src/other.ts → src/sim/model.ts',
        'store-not-venues: src/store/pg/p.ts → src/venues/types.ts',
        'store-not-venues: src/store/pg/q.ts → src/sim/model.ts',
        'sim-world-through-its-adapter: src/store/pg/q.ts → src/sim/model.ts',
        'venues-not-store: src/venues/v.ts → src/store/redis/s.ts',
      ].sort(),
    );
  });
});
