// Import direction between Kilowatch packages (docs/architecture.md §Packages). CI fails on any violation.
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

// Test files may compose one engine more than their package's code does (ingest's reliability tests run the
// bridge against the real InfluxDB engine); the package's own code never imports it.
const testOnly = { ingest: ['influx'] };

const directionRules = Object.entries(allowed).flatMap(([from, to]) => {
  const forbidden = pkgs.split('|').filter((p) => p !== from && !to.includes(p));
  const extra = testOnly[from] ?? [];
  const rule = (name, path, pathNot, list) => ({
    name,
    comment: `${from} may import only: ${to.join(', ') || 'nothing of ours'}`,
    severity: 'error',
    from: { path, ...(pathNot ? { pathNot } : {}) },
    to: { path: `^(${list.join('|')})/` },
  });
  if (extra.length === 0) return [rule(`${from}-imports`, `^${from}/`, undefined, forbidden)];
  return [
    rule(`${from}-imports`, `^${from}/`, '\\.test\\.ts$', forbidden),
    rule(
      `${from}-test-imports`,
      `^${from}/.*\\.test\\.ts$`,
      undefined,
      forbidden.filter((p) => !extra.includes(p)),
    ),
  ];
});

module.exports = {
  forbidden: [
    ...directionRules,
    {
      name: 'testkit-dev-only',
      comment:
        "The test kit is dev-only: only tests, their helpers (src/test/), a package's testing entry (src/testing.ts, src/testing/) and the benches import it",
      severity: 'error',
      from: {
        path: `^(${pkgs})/`,
        pathNot: ['\\.test\\.ts$', '^[^/]+/src/test/', '^[^/]+/src/testing(\\.ts$|/)', '^bench/'],
      },
      to: { path: '^testkit/' },
    },
    {
      name: 'testkit-imports-nothing-of-ours',
      comment: 'The test kit stands alone: no Kilowatch package below it',
      severity: 'error',
      from: { path: '^testkit/' },
      to: { path: `^(${pkgs})/` },
    },
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
      name: 'web-feature-isolation',
      comment:
        'A web feature (a screen family under web/src/features/X) does not import another feature: what two features share lives in web/src/shared (or ranges, charts, api, lib)',
      severity: 'error',
      from: { path: '^web/src/features/([^/]+)/' },
      to: { path: '^web/src/features/', pathNot: '^web/src/features/$1/' },
    },
    {
      name: 'web-shared-below-features',
      comment: 'Only the app (routes and screens) composes features; the shared web code never imports one',
      severity: 'error',
      from: { path: '^web/src/', pathNot: '^web/src/(features|app)/' },
      to: { path: '^web/src/features/' },
    },
    {
      name: 'api-ingest-in-composition-root',
      comment:
        'The API composes ingest (its broker, bridge, live subscriber, simulator) only in its composition root (main.ts and the roles it starts, src/roles/); what the two share is a contract in core (core/src/mqtt.ts). Tests, and the test tooling in src/testing/, may compose ingest too',
      severity: 'error',
      from: {
        path: '^api/src/',
        pathNot: ['^api/src/main\\.ts$', '^api/src/roles/', '^api/src/testing/', '\\.test\\.ts$'],
      },
      to: { path: '^ingest/' },
    },
    {
      name: 'public-entry-only',
      comment:
        'Another package is reached only through its public entries (src/index.ts, src/conformance.ts, src/testing.ts, src/columns.ts)',
      severity: 'error',
      from: { path: `^(${pkgs})/` },
      to: {
        path: `^(${pkgs})/src/`,
        pathNot: ['^$1/', `^(${pkgs})/src/(index|conformance|testing|columns)\\.ts$`],
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
