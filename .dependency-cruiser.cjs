// Import direction between Kilowatch packages (ARCHITECTURE.md §Packages). CI fails on any violation.
const pkgs = 'core|tsdb|influx|ingest|api|grafana-compat|web|bench';
const allowed = {
  core: [],
  tsdb: ['core'],
  influx: ['tsdb', 'core'],
  ingest: ['tsdb', 'core'],
  'grafana-compat': ['tsdb', 'core'],
  api: ['ingest', 'grafana-compat', 'influx', 'tsdb', 'core'],
  web: ['core'],
  bench: ['core', 'tsdb', 'influx', 'ingest', 'api', 'grafana-compat', 'web'],
};

const directionRules = Object.entries(allowed).map(([from, to]) => {
  const forbidden = pkgs.split('|').filter((p) => p !== from && !to.includes(p));
  return {
    name: `${from}-imports`,
    comment: `${from} may import only: ${to.join(', ') || 'nothing of ours'}`,
    severity: 'error',
    from: { path: `^${from}/` },
    to: { path: `^(${forbidden.join('|')})/` },
  };
});

module.exports = {
  forbidden: [
    ...directionRules,
    {
      name: 'not-to-unresolvable',
      comment: 'An import of a package that is not declared in package.json (or a missing file)',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'public-entry-only',
      comment:
        'Another package is reached only through its public entries (src/index.ts, src/conformance.ts, src/testing.ts)',
      severity: 'error',
      from: { path: `^(${pkgs})/` },
      to: {
        path: `^(${pkgs})/src/`,
        pathNot: ['^$1/', `^(${pkgs})/src/(index|conformance|testing)\\.ts$`],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist|data)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'default'] },
  },
};
