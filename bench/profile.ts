/**
 * Top self-time functions of a V8 .cpuprofile (as written by node --cpu-prof),
 * and the same self time grouped by kind (kernel writes, Node http, undici,
 * GC, the gateway's modules...), as Markdown tables from which the Profile
 * section of RESULTS.md is written.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
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

/** Native socket writes: their self time is mostly the write syscall, and on loopback the kernel's TCP send path. */
const SOCKET_WRITES = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString', 'writeUcs2String']);

/** Node helpers whose time belongs to whoever called them (Buffer.from in auth is auth's, randomUUID is the handler's). */
const HELPERS = /^node:(buffer|crypto|path|internal\/(buffer|crypto\/|perf\/|validators|util|errors|per_context\/|url))/;

/** The kind of one frame, or undefined for a frame that belongs to its caller's kind (native or a helper). */
function kindOf(name: string, url: string, root: string): string | undefined {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)') return 'V8 and native code outside any JS function ((program))';
  if (!url) return SOCKET_WRITES.has(name) ? 'socket writes (writev & co.): write syscalls, kernel loopback TCP' : undefined;
  const rel = url.startsWith(`file://${root}`) ? url.slice(`file://${root}`.length) : url;
  if (HELPERS.test(rel)) return undefined;
  if (rel.includes('node_modules/undici/') || rel.startsWith('wasm://')) return 'undici (incl. its llhttp wasm parser)';
  if (rel.includes('node_modules/prom-client/') || rel.startsWith('dist/src/metrics/')) return 'gateway: metrics (prom-client, metrics.js)';
  if (rel.startsWith('dist/src/http/body.js') && name === 'parseJson') return 'gateway: JSON.parse of the body (body.js parseJson)';
  if (rel.includes('node_modules/ajv/') || rel.startsWith('dist/src/pipeline/validation.js')) return 'gateway: body validation (validation.js, ajv)';
  if (rel.startsWith('dist/src/http/auth.js')) return 'gateway: auth (SHA-256 of the key, cache lookup)';
  if (rel.startsWith('dist/src/config/')) return 'gateway: config';
  if (/^dist\/src\/(routing|providers|upstream)\//.test(rel)) return 'gateway: routing (router, provider adapter, upstream client)';
  if (/^dist\/src\/(http|pipeline)\//.test(rel)) return 'gateway: HTTP layer and pipeline stages (server, headers, stages, responses)';
  if (rel.startsWith('dist/src/')) return 'gateway: other modules';
  if (rel.startsWith('dist/bench/node-floor.js')) return 'node floor: its handler (node-floor.js, incl. JSON.parse)';
  if (rel.includes('node_modules/pino/')) return 'logging (pino)';
  if (rel.includes('node_modules/')) return 'other dependencies';
  if (/^node:(_http_|http$|internal\/http)/.test(rel)) return 'Node http (request parsing, headers, response writing)';
  if (rel.startsWith('node:internal/modules/') || rel.startsWith('node:internal/bootstrap/')) return 'start-up (module loading)';
  if (/^node:(net$|stream$|events$|timers$|internal\/(stream_base_commons|streams\/|process\/|timers|event_target|async_hooks))/.test(rel)) {
    return 'Node streams, sockets, events, ticks';
  }
  if (rel.startsWith('node:')) return 'Node, other internals';
  return 'other';
}

/**
 * Busy self time grouped by kind: native frames and Node helpers count with
 * their caller's kind (socket writes apart). With `requests` (all the process
 * served while profiled), also µs per request.
 */
export function selfTimeByKind(file: string, root: string, requests?: number): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const kindCache = new Map<number, string>();
  const kindOfNode = (id: number): string => {
    const cached = kindCache.get(id);
    if (cached !== undefined) return cached;
    const n = byId.get(id);
    let kind = n && kindOf(n.callFrame.functionName, n.callFrame.url, root);
    if (kind === undefined) {
      const up = parent.get(id);
      kind = up === undefined ? 'other native' : kindOfNode(up);
    }
    kindCache.set(id, kind);
    return kind;
  };
  const hits = new Map<string, number>();
  let busy = 0;
  let total = 0;
  for (const n of profile.nodes) {
    const h = n.hitCount ?? 0;
    total += h;
    if (h === 0 || n.callFrame.functionName === '(idle)') continue;
    busy += h;
    const kind = kindOfNode(n.id);
    hits.set(kind, (hits.get(kind) ?? 0) + h);
  }
  const msPerHit = total > 0 ? (profile.endTime - profile.startTime) / 1000 / total : 0;
  const perRequest = requests !== undefined && requests > 0;
  const row = (kind: string, h: number): string =>
    `| ${kind} | ${((100 * h) / Math.max(busy, 1)).toFixed(1)} % | ${(h * msPerHit).toFixed(0)} |` +
    (perRequest ? ` ${((h * msPerHit * 1000) / requests).toFixed(1)} |` : '');
  const rows = [...hits.entries()].sort((a, b) => b[1] - a[1]).map(([kind, h]) => row(kind, h));
  return [
    ...(perRequest ? [`Requests served while profiled (warm-ups included): ${requests}; µs/request is under the profiler.`, ''] : []),
    `| kind | share of busy self time | self ms |${perRequest ? ' µs/request |' : ''}`,
    `| --- | ---: | ---: |${perRequest ? ' ---: |' : ''}`,
    ...rows,
    row('**all busy**', busy),
  ].join('\n');
}
