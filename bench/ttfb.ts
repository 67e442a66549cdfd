/**
 * Streaming latency, which wrk cannot see: N sequential streamed requests over
 * one keep-alive connection, timing the first body byte and the end of each.
 */
import http from 'node:http';

export interface Percentiles {
  p50: number;
  p99: number;
}

/** Nearest-rank percentiles of µs values. */
export function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number): number => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
  return { p50: at(50), p99: at(99) };
}

export interface StreamSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  count: number;
  /** Stop early after this long, whatever count says. */
  maxMs: number;
}

/** µs from the start of a request to the first body byte, and to the end of the stream. */
export interface Timing {
  ttfb: number;
  total: number;
}

export interface StreamResult {
  timings: Timing[];
  errors: number;
  errorDetail: string;
}

function oneStream(url: URL, spec: StreamSpec, agent: http.Agent): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    let first = 0n;
    let text = '';
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        timeout: 5000,
        headers: { ...spec.headers, 'content-length': Buffer.byteLength(spec.body) },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (first === 0n) first = process.hrtime.bigint();
          text += chunk;
        });
        res.on('error', reject);
        res.on('end', () => {
          const end = process.hrtime.bigint();
          if (res.statusCode !== 200 || !text.includes('data: [DONE]')) {
            reject(new Error(`status ${res.statusCode}: ${text.slice(0, 200)}`));
          } else {
            resolve({ ttfb: Number(first - start) / 1000, total: Number(end - start) / 1000 });
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
    req.end(spec.body);
  });
}

export async function measureStreams(spec: StreamSpec): Promise<StreamResult> {
  const url = new URL(spec.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const timings: Timing[] = [];
  let errors = 0;
  let errorDetail = '';
  const deadline = performance.now() + spec.maxMs;
  try {
    for (let i = 0; i < spec.count && performance.now() < deadline; i++) {
      try {
        timings.push(await oneStream(url, spec, agent));
      } catch (err) {
        errors++;
        errorDetail ||= String(err);
      }
    }
  } finally {
    agent.destroy();
  }
  return { timings, errors, errorDetail };
}
