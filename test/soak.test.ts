// The soak (`npm run soak`, bench/soak.ts): its verdict on RSS, and a run of a
// few hundred requests so the script cannot rot unnoticed. The real soak runs
// by hand (bench/SOAK.md), never in npm test.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runToEnd } from '../bench/children.js';
import { SCHEDULE } from '../bench/soak-lanes.js';
import { rssVerdict, type RssSample } from '../bench/soak-report.js';

const SOAK_JS = fileURLToPath(new URL('../bench/soak.js', import.meta.url));

/** One sample every 200 ms for `seconds`: a GC sawtooth of `amplitude` MiB, period 20 s, on a level that climbs by `growth` over the run. */
function sawtooth(seconds: number, amplitude: number, growth: number): RssSample[] {
  const out: RssSample[] = [];
  for (let t = 0; t <= seconds; t += 0.2) out.push({ seconds: t, rssMiB: 190 * (1 + (growth * t) / seconds) + amplitude * ((t % 20) / 20) });
  return out;
}

describe('soak verdict on RSS', () => {
  it("calls a steady GC sawtooth flat, though its swings pass ±10 % of any one sample", () => {
    const v = rssVerdict(sawtooth(500, 50, 0), 100);
    assert.equal(v.flat, true, v.text);
  });

  it('calls a sawtooth whose level climbs 15 % not flat', () => {
    const v = rssVerdict(sawtooth(500, 50, 0.15), 100);
    assert.equal(v.flat, false, v.text);
    assert.match(v.text, /NOT flat/);
  });

  it('calls a fall of 15 % not flat either', () => {
    assert.equal(rssVerdict(sawtooth(500, 10, -0.15), 100).flat, false);
  });

  it('decides nothing from too few samples after the warm-up', () => {
    const v = rssVerdict(sawtooth(10, 0, 0), 9);
    assert.equal(v.flat, false);
    assert.match(v.text, /undecided/);
  });
});

describe('npm run soak, 200 requests', { timeout: 60_000 }, () => {
  it('runs every lane with the outcomes it expects, prints its rows and a verdict', async () => {
    const run = await runToEnd(process.execPath, [SOAK_JS, '200'], 50_000);
    // 1 is RSS not flat, which 200 requests cannot promise either way; 2 is a failed load.
    assert.ok(run.code === 0 || run.code === 1, `exit ${run.code}\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^\| 1 warm-up \| \d+ \|/m, 'a first row');
    assert.match(run.stdout, /^\| 20 \| 200 \|/m, 'the last row, after every request');
    for (const lane of new Set(SCHEDULE)) assert.match(run.stdout, new RegExp(`^\\| ${lane} \\| .* \\| 0 \\|$`, 'm'), `lane ${lane}`);
    assert.match(run.stdout, /^- Verdict: RSS after warm-up (flat|NOT flat|undecided)/m);
  });
});
