// The soak (`npm run soak`, bench/soak.ts): its verdict on RSS, and a run of a
// few hundred requests so the script cannot rot unnoticed. The real soak runs
// by hand (bench/SOAK.md), never in npm test.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { runToEnd } from '../bench/children.js';
import { SCHEDULE } from '../bench/soak-lanes.js';
import { MIN_GC_CYCLES, rssVerdict, type RssSample } from '../bench/soak-report.js';

const SOAK_JS = fileURLToPath(new URL('../bench/soak.js', import.meta.url));

/** One sample every 200 ms for `seconds`: a GC sawtooth of `amplitude` MiB, period 20 s, on a level that climbs by `growth` over the run. */
function sawtooth(seconds: number, amplitude: number, growth: number): RssSample[] {
  const out: RssSample[] = [];
  for (let t = 0; t <= seconds; t += 0.2) out.push({ seconds: t, rssMiB: 190 * (1 + (growth * t) / seconds) + amplitude * ((t % 20) / 20) });
  return out;
}

describe('soak verdict on RSS', () => {
  // 400 s after a warm-up of 100 s: 20 teeth of the saw.
  it('calls a steady GC sawtooth flat, though its swings pass ±10 % of any one sample', () => {
    const v = rssVerdict(sawtooth(500, 50, 0), 100, 20);
    assert.equal(v.outcome, 'flat', v.text);
  });

  it('calls a sawtooth whose level climbs 15 % not flat', () => {
    const v = rssVerdict(sawtooth(500, 50, 0.15), 100, 20);
    assert.equal(v.outcome, 'not flat', v.text);
    assert.match(v.text, /NOT flat/);
  });

  it('calls a fall of 15 % not flat either', () => {
    assert.equal(rssVerdict(sawtooth(500, 10, -0.15), 100, 20).outcome, 'not flat');
  });

  it(`decides nothing from fewer than ${MIN_GC_CYCLES} major GCs after the warm-up, where a line leans with where the saw was cut`, () => {
    // 50 s after the warm-up, cut mid-tooth: the line climbs though the saw does not.
    const samples = sawtooth(60, 50, 0).filter((s) => s.seconds <= 58);
    const v = rssVerdict(samples, 10, 2);
    assert.equal(v.outcome, 'undecided', v.text);
    assert.match(v.text, /run more requests/);
    assert.equal(rssVerdict(samples, 10, NaN).outcome, 'undecided', 'no GC count at all');
  });
});

describe('npm run soak, 200 requests', { timeout: 60_000 }, () => {
  it('runs every lane with the outcomes it expects, prints its rows and a verdict', async () => {
    const run = await runToEnd(process.execPath, [SOAK_JS, '200'], 50_000);
    // 200 requests cannot promise a verdict on RSS (0 flat, 1 not, 3 undecided); 2 is a failed load.
    assert.ok(run.code === 0 || run.code === 1 || run.code === 3, `exit ${run.code}\n${run.stdout}\n${run.stderr}`);
    assert.match(run.stdout, /^\| 1 warm-up \| \d+ \|/m, 'a first row');
    assert.match(run.stdout, /^\| 20 \| 200 \|/m, 'the last row, after every request');
    for (const lane of new Set(SCHEDULE)) assert.match(run.stdout, new RegExp(`^\\| ${lane} \\| .* \\| 0 \\|$`, 'm'), `lane ${lane}`);
    assert.match(run.stdout, /^- Verdict: RSS after warm-up (flat|NOT flat|undecided)/m);
  });
});
