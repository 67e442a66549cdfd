/** Reading a gateway's `GET /metrics` (Prometheus text), for the bench and the soak. */

export async function scrape(base: string): Promise<string> {
  const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`/metrics: status ${res.status}`);
  return res.text();
}

/** The value of one series, `name` or `name{labels}` exactly as exposed; undefined when absent. */
export function metricValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
