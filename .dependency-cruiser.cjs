/**
 * The import rule of src/ (docs/ARCHITECTURE.md, "Layers"), checked by `npm test`:
 * a module imports only from its own folder or from a folder in a lower layer, and
 * no import cycle, not even one of types only. LAYERS is the one place the order
 * is written down; the rules below are made from it.
 */

/** Top to bottom; folders of one layer do not import each other. */
const LAYERS = [
  ['cli'], // the switchyard command: starts main.ts, or talks to a running gateway
  ['main.ts'], // the process
  ['cluster'], // GATEWAY_WORKERS: the primary (migrations, log writer, shared state without Redis) and its workers
  ['gateway.ts'], // composition root
  ['openapi'], // GET /v1/openapi.json, made from the route tables and their schemas
  ['admin', 'pipeline', 'batches'], // management API; the request stages; files and gateway-managed batches
  ['http'], // server (handlers injected), auth, respond, body, headers
  ['cache'], // answer cache (the embedder calls the router)
  ['tracing', 'metrics'], // spans; Prometheus
  ['routing', 'limits', 'logs'], // plans, router, circuits; rate and usage limits; request logs
  ['config', 'catalog'], // the Config schema (composes provider settings); the model catalog
  ['guardrails', 'prompts'], // hooks' built-in checks and the engine that runs them; prompt templates rendered
  ['providers'], // adapters and translators
  ['upstream'], // the pooled HTTP client
  ['store', 'state'], // SQLite/Postgres; the Redis connection
  ['shared', 'settings.ts'], // errors, endpoint names, the one Ajv, header and path helpers; process settings
];

const path = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '\\.')}$` : `^src/${name}/`);

/** A module of `name` may import from these: its own folder and every folder below its layer. */
function allowedFrom(layer, name) {
  const below = LAYERS.slice(layer + 1).flat();
  return { from: { path: path(name) }, to: { path: [path(name), ...below.map(path)] } };
}

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: the type or helper both sides need belongs in a lower module.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'config-takes-provider-settings-only',
      severity: 'error',
      comment: 'config/ composes each provider’s settings schema; the rest of providers/ sits above what config/ may know.',
      from: { path: '^src/config/' },
      to: { path: '^src/providers/', pathNot: ['^src/providers/[^/]+/settings\\.ts$', '^src/providers/settings\\.ts$'] },
    },
    {
      name: 'no-tests-in-the-product',
      severity: 'error',
      comment: 'Code under src/ never imports a test or a test helper.',
      from: { path: '^src/', pathNot: '\\.test\\.ts$' },
      to: { path: ['^test/', '\\.test\\.ts$'] },
    },
  ],
  allowed: [
    ...LAYERS.flatMap((names, layer) => names.map((name) => allowedFrom(layer, name))),
    // Packages and Node's own modules.
    { from: { path: '^src/' }, to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'core'] } },
    // Tests, benchmarks and their helpers may import anything.
    { from: { path: ['^test/', '^bench/', '\\.test\\.ts$'] }, to: {} },
  ],
  allowedSeverity: 'error',
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^dist/' },
    // Resolve packages through their `exports` maps, as Node does (gpt-tokenizer's subpaths).
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'] },
  },
};

// For test/layering.test.ts, which checks docs/ARCHITECTURE.md against it; not enumerable,
// since dependency-cruiser refuses keys it does not know.
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });
