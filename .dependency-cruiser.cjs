/**
 * The dependency direction of shared/ARCHITECTURE.md, enforced on every `npm test`.
 * cli/ is the composition root: it may import every layer; nothing imports it.
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'src/domain imports nothing outside itself, no node:* and no packages',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { pathNot: '^src/domain/' },
    },
    {
      name: 'compute-is-pure',
      comment: 'src/compute imports only itself and src/domain',
      severity: 'error',
      from: { path: '^src/compute/' },
      to: { pathNot: '^src/(compute|domain)/' },
    },
    {
      name: 'venues-and-store-import-domain',
      comment: 'src/venues and src/store import the domain, never each other, api, pipelines or workers',
      severity: 'error',
      from: { path: '^src/(venues|store)/' },
      to: { path: '^(api|pipelines|workers|cli|bench|test)/|^src/compute/' },
    },
    {
      name: 'venues-not-store',
      comment: 'src/venues never imports src/store',
      severity: 'error',
      from: { path: '^src/venues/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'store-not-venues',
      comment: 'src/store never imports src/venues (nor the simulated world behind the sim adapter)',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(venues|sim)/' },
    },
    {
      name: 'sim-world-below-its-adapter',
      comment: 'src/sim (the simulated world) imports the domain, the venue vocabulary (src/venues/types.ts, errors.ts) and the core errors; never an adapter, the registry, the stores or compute',
      severity: 'error',
      from: { path: '^src/sim/' },
      to: { path: '^src/', pathNot: '^src/(sim/|domain/|venues/types[.]ts$|venues/errors[.]ts$|errors[.]ts$)' },
    },
    {
      name: 'sim-world-through-its-adapter',
      comment: 'inside src, only the sim adapter (src/venues/sim) and the registry that builds it reach the simulated world',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(sim/|venues/sim/|venues/registry[.]ts$)' },
      to: { path: '^src/sim/' },
    },
    {
      name: 'src-stays-below',
      comment: 'src is the core: it never imports the layers built on it',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(api|pipelines|workers|cli|bench|test)/' },
    },
    {
      name: 'workers-are-thin',
      comment: 'piscina task files import only src/domain and src/compute (the tsx bootstrap used from source excepted)',
      severity: 'error',
      from: { path: '^workers/', pathNot: '[.]boot[.]mjs$' },
      to: { pathNot: '^(workers|src/domain|src/compute)/' },
    },
    {
      name: 'pipelines-below-api',
      severity: 'error',
      from: { path: '^pipelines/' },
      to: { path: '^(api|cli|bench|test)/' },
    },
    {
      name: 'api-uses-producers-only',
      comment: 'api imports src and, of pipelines, only the producers and queues.ts; never workers',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(pipelines|workers|cli|bench|test)/', pathNot: '^pipelines/(producers/|queues[.]ts$)' },
    },
    {
      name: 'bench-not-test',
      comment: 'benches stand on their own: they never import test code',
      severity: 'error',
      from: { path: '^bench/' },
      to: { path: '^test/' },
    },
    {
      name: 'nobody-imports-api-bench-test',
      severity: 'error',
      from: { pathNot: '^(api|cli|bench|test)/' },
      to: { path: '^(api|bench|test|cli)/' },
    },
    {
      name: 'bench-test-private',
      comment: 'nothing outside test imports test; nothing outside bench imports bench',
      severity: 'error',
      from: { pathNot: '^(test|bench)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
