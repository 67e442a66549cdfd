/**
 * Closed-loop HTTP load with wrk, pinned to the load core. A generated Lua
 * script sets the POST body and headers, and its done() prints the summary as
 * one JSON line, which is steadier to parse than wrk's human output.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runToEnd } from './children.js';

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationS: number;
}

export interface WrkResult {
  requests: number;
  rps: number;
  /** Latency of one request, µs. */
  p50: number;
  p99: number;
  /** Socket errors, timeouts and responses with status ≥ 400. */
  errors: number;
  errorDetail: string;
  /** wrk's own CPU time and run length: near one CPU second per second, wrk was the limit. */
  cpuS: number;
  durationS: number;
}

const MARK = 'WRK_RESULT ';

function luaString(s: string): string {
  // JSON escapes of printable ASCII (\" and \\) mean the same in Lua.
  if (!/^[\x20-\x7e]*$/.test(s)) throw new Error(`not printable ASCII: ${s}`);
  return JSON.stringify(s);
}

function script(spec: LoadSpec): string {
  const headers = Object.entries(spec.headers)
    .map(([k, v]) => `wrk.headers[${luaString(k)}] = ${luaString(v)}`)
    .join('\n');
  return `wrk.method = "POST"
wrk.body = ${luaString(spec.body)}
${headers}

function done(summary, latency, requests)
  local e = summary.errors
  -- os.clock() is the CPU time of the whole wrk process
  io.write(string.format('${MARK}{"requests":%d,"duration_us":%d,"p50":%d,"p99":%d,"cpu_s":%.3f,' ..
    '"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), os.clock(),
    e.connect, e.read, e.write, e.status, e.timeout))
end
`;
}

interface DoneLine {
  requests: number;
  duration_us: number;
  p50: number;
  p99: number;
  cpu_s: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
}

export async function runWrk(spec: LoadSpec, workDir: string, core: number): Promise<WrkResult> {
  const scriptPath = join(workDir, 'load.lua');
  writeFileSync(scriptPath, script(spec));
  const args = ['-c', String(core), 'wrk', '-t1', `-c${spec.connections}`, `-d${spec.durationS}s`, '--timeout', '5s'];
  const out = await runToEnd('taskset', [...args, '-s', scriptPath, spec.url], (spec.durationS + 15) * 1000);
  const line = out.stdout.split('\n').find((l) => l.startsWith(MARK));
  if (out.code !== 0 || !line) throw new Error(`wrk failed (exit ${out.code}): ${out.stderr || out.stdout}`);
  const r = JSON.parse(line.slice(MARK.length)) as DoneLine;
  const detail = (['connect', 'read', 'write', 'status', 'timeout'] as const)
    .filter((k) => r[k] > 0)
    .map((k) => `${k} ${r[k]}`)
    .join(', ');
  return {
    requests: r.requests,
    rps: r.requests / (r.duration_us / 1e6),
    p50: r.p50,
    p99: r.p99,
    errors: r.connect + r.read + r.write + r.status + r.timeout,
    errorDetail: detail,
    cpuS: r.cpu_s,
    durationS: r.duration_us / 1e6,
  };
}
