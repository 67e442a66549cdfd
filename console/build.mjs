// Builds the console (console/src) into console/dist for the gateway to serve at /console:
// Preact, htm and uPlot bundled from their npm packages into one ES module and one stylesheet,
// both named by content hash, and index.html pointing at them. `npm run build` runs this.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, 'src');
const out = join(here, 'dist');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const result = await build({
  entryPoints: { app: join(src, 'app.js'), style: join(src, 'style.css') },
  bundle: true,
  format: 'esm',
  target: ['es2022'],
  minify: true,
  sourcemap: false,
  outdir: out,
  entryNames: '[name]-[hash]',
  metafile: true,
  logLevel: 'warning',
});
const built = {};
for (const [file, meta] of Object.entries(result.metafile.outputs)) {
  if (meta.entryPoint === undefined) continue;
  built[meta.entryPoint.endsWith('.css') ? 'style.css' : 'app.js'] = basename(file);
}
const page = readFileSync(join(src, 'index.html'), 'utf8').replace(/\{\{(app\.js|style\.css)\}\}/g, (_, name) => built[name]);
writeFileSync(join(out, 'index.html'), page);
