/**
 * Top self-time functions of a V8 .cpuprofile (as written by node --cpu-prof),
 * as a Markdown table from which the Profile section of RESULTS.md is written.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** µs */
  startTime: number;
  endTime: number;
}

/** Strips the repository prefix so locations read as `dist/src/...`. */
function location(url: string, line: number, root: string): string {
  if (!url) return '';
  const rel = url.startsWith(`file://${root}`) ? url.slice(`file://${root}`.length) : url;
  return `${rel}:${line + 1}`; // V8 lines are 0-based
}

export function topSelfTime(file: string, n: number, root: string): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byKey = new Map<string, { name: string; where: string; hits: number }>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    total += hits;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || '(anonymous)';
    const where = location(url, lineNumber, root);
    const key = `${name} ${where}`;
    const entry = byKey.get(key) ?? { name, where, hits: 0 };
    entry.hits += hits;
    byKey.set(key, entry);
  }
  const idle = byKey.get('(idle) ')?.hits ?? 0;
  const busy = total - idle;
  const msPerHit = total > 0 ? (profile.endTime - profile.startTime) / 1000 / total : 0;
  const rows = [...byKey.values()]
    .filter((e) => e.name !== '(idle)')
    .sort((a, b) => b.hits - a.hits)
    .slice(0, n)
    .map(
      (e, i) =>
        `| ${i + 1} | ${((100 * e.hits) / busy).toFixed(1)} % | ${(e.hits * msPerHit).toFixed(0)} | \`${e.name}\` | ${e.where} |`,
    );
  return [
    `Samples: ${total}, of which idle ${((100 * idle) / Math.max(total, 1)).toFixed(1)} %; shares below are of busy samples.`,
    '',
    '| # | self | self ms | function | location |',
    '| ---: | ---: | ---: | --- | --- |',
    ...rows,
  ].join('\n');
}
