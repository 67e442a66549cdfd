// The import rule of src/ (docs/ARCHITECTURE.md, "Layers"; .dependency-cruiser.cjs, run by
// `npm test` before the suites): the doc and the rule name the same layers, and the rule
// refuses an upward import, an import beside a module's layer, and a cycle of types.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const LAYERS = (createRequire(import.meta.url)(CONFIG) as { LAYERS: string[][] }).LAYERS;

/** The layers block of ARCHITECTURE.md: a line a layer, its folders (`name/`) and files (`name.ts`), then after three spaces or more a comment. */
function documentedLayers(): string[][] {
  const doc = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  const block = /## Layers[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(block !== undefined, 'ARCHITECTURE.md has a fenced block under "## Layers"');
  return block
    .trim()
    .split('\n')
    .map((line) => line.split(/\s{3,}/)[0]!.split(/\s+/).map((n) => n.replace(/\/$/, '')));
}

/** depcruise over a tree of files (path → source) under a temp dir, with the project's rule. */
function cruise(files: Record<string, string>): { status: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-layers-'));
  try {
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const bin = join(ROOT, 'node_modules/.bin/depcruise');
    const r = spawnSync(bin, ['src', '--config', CONFIG, '--output-type', 'err'], { cwd: dir, encoding: 'utf8' });
    return { status: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('layering', () => {
  it('docs/ARCHITECTURE.md lists the layers the rule enforces, in its order', () => {
    assert.deepEqual(documentedLayers(), LAYERS);
  });

  it('a tree that imports downwards only passes', () => {
    const r = cruise({
      'src/shared/errors.ts': 'export const x = 1;\n',
      'src/providers/a.ts': "import { x } from '../shared/errors.js';\nexport const a = x;\n",
      'src/pipeline/p.ts': "import { a } from '../providers/a.js';\nexport const p = a;\n",
    });
    assert.equal(r.status, 0, r.out);
  });

  it('an upward import, an import beside the layer and a cycle of types are each refused, by name', () => {
    const r = cruise({
      'src/config/types.ts': 'export interface Node { a: number }\n',
      'src/providers/a.ts': "import type { Node } from '../config/types.js';\nexport const a = (n: Node) => n.a;\n",
      'src/admin/x.ts': "import { p } from '../pipeline/p.js';\nexport const x = p;\n",
      'src/pipeline/p.ts': 'export const p = 1;\n',
      'src/logs/one.ts': "import type { Two } from './two.js';\nexport interface One { two?: Two }\n",
      'src/logs/two.ts': "import type { One } from './one.js';\nexport interface Two { one?: One }\n",
    });
    assert.notEqual(r.status, 0);
    assert.match(r.out, /not-in-allowed: src\/providers\/a\.ts → src\/config\/types\.ts/);
    assert.match(r.out, /not-in-allowed: src\/admin\/x\.ts → src\/pipeline\/p\.ts/);
    assert.match(r.out, /no-circular: src\/logs\/(one|two)\.ts/);
  });

  it('config/ may take a provider’s settings schema, and nothing else of providers/', () => {
    const r = cruise({
      'src/providers/acme/settings.ts': 'export const settings = {};\n',
      'src/providers/acme/adapter.ts': 'export const adapter = {};\n',
      'src/config/schema.ts': "import { settings } from '../providers/acme/settings.js';\nimport { adapter } from '../providers/acme/adapter.js';\nexport const s = [settings, adapter];\n",
    });
    assert.notEqual(r.status, 0);
    assert.match(r.out, /config-takes-provider-settings-only: src\/config\/schema\.ts → src\/providers\/acme\/adapter\.ts/);
    assert.doesNotMatch(r.out, /src\/config\/schema\.ts → src\/providers\/acme\/settings\.ts/);
  });
});
