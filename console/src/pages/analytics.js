// Analytics from GET /v1/analytics/groups/:groupBy. Over time: one call per time bucket (start_time and
// end_time bound it), each answering every group's aggregates, so each group value becomes a series.
// By grouping: one call over the whole range.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { api } from '../api.js';
import { num, usd } from '../format.js';
import { ErrorBox, Field, html, Table, useLoad } from '../ui.js';

const GROUP_BYS = ['model', 'ai_service', 'provider', 'api_key', 'config', 'workspace', 'status_code', 'prompt', 'hook_status'];
const COLUMNS = ['cost', 'total_tokens', 'avg_latency', 'p50_latency', 'p95_latency', 'p99_latency', 'error_count', 'success_rate', 'cache_hit_rate'];
const METRICS = {
  requests: { label: 'Requests', fmt: (v) => num(v) },
  cost: { label: 'Cost (USD)', fmt: usd },
  total_tokens: { label: 'Tokens', fmt: (v) => num(v) },
  error_count: { label: 'Errors', fmt: (v) => num(v) },
  cache_hit_rate: { label: 'Cache hit rate (%)', fmt: (v) => num(v, 1) },
  p50_latency: { label: 'Latency p50 (ms)', fmt: (v) => num(v) },
  p95_latency: { label: 'Latency p95 (ms)', fmt: (v) => num(v) },
  p99_latency: { label: 'Latency p99 (ms)', fmt: (v) => num(v) },
};
const RANGES = { '15m': 900, '1h': 3600, '24h': 86400, '7d': 604800 };
const BUCKETS = 24;
const SERIES = 6;
const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2'];
const nameOf = (g, by) => (g[by] === null ? '(none)' : String(g[by]));

/** Every bucket's groups: [{at, groups}], `at` the bucket's start in Unix seconds. */
async function overTime(by, rangeSeconds) {
  const end = Date.now() / 1000;
  const width = rangeSeconds / BUCKETS;
  const starts = Array.from({ length: BUCKETS }, (_, i) => end - rangeSeconds + i * width);
  return Promise.all(
    starts.map(async (at) => {
      // end_time is inclusive: a bucket ends a millisecond before the next begins.
      const page = await api(`/analytics/groups/${by}`, { query: { start_time: at.toFixed(3), end_time: (at + width - 0.001).toFixed(3), columns: COLUMNS.join(','), limit: 100 } });
      return { at, groups: page.data };
    }),
  );
}

function Chart({ title, data, series, fmt }) {
  const box = useRef(null);
  useEffect(() => {
    const el = box.current;
    if (el === null) return undefined;
    const opts = {
      title,
      width: Math.max(280, el.clientWidth),
      height: 240,
      series: [{}, ...series.map((s, i) => ({ label: s, stroke: COLOURS[i % COLOURS.length], width: 2, spanGaps: true, value: (_, v) => (v == null ? '—' : fmt(v)) }))],
      axes: [{}, { size: 70, values: (_, ticks) => ticks.map(fmt) }],
      scales: { x: { time: true } },
    };
    const plot = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, el.clientWidth), height: 240 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [title, data, series]);
  return html`<figure class="chart"><div ref=${box} role="img" aria-label=${`${title}: ${series.join(', ')}`}></div></figure>`;
}

export function AnalyticsPage() {
  const [by, setBy] = useState('model');
  const [metric, setMetric] = useState('requests');
  const [range, setRange] = useState('1h');
  const [tick, setTick] = useState(0);
  const times = useLoad(() => overTime(by, RANGES[range]), [by, range, tick]);
  const totals = useLoad(
    () => api(`/analytics/groups/${by}`, { query: { start_time: String(Math.floor(Date.now() / 1000 - RANGES[range])), columns: COLUMNS.join(','), limit: 100 } }),
    [by, range, tick],
  );
  // The busiest groups over the range are the series.
  const top = (totals.data?.data ?? []).slice().sort((a, b) => b.requests - a.requests).slice(0, SERIES).map((g) => nameOf(g, by));
  const xs = (times.data ?? []).map((b) => b.at);
  const column = (name, m) => (times.data ?? []).map((b) => b.groups.find((g) => nameOf(g, by) === name)?.[m] ?? (m === 'requests' || m === 'cost' || m === 'total_tokens' || m === 'error_count' ? 0 : null));
  const main = [xs, ...top.map((name) => column(name, metric))];
  const busiest = top[0];
  const latency = busiest === undefined ? null : [xs, column(busiest, 'p50_latency'), column(busiest, 'p95_latency'), column(busiest, 'p99_latency')];

  return html`<div class="analytics">
    <form class="filters" onSubmit=${(e) => { e.preventDefault(); setTick(tick + 1); }} aria-label="Chart settings">
      <${Field} id="a-by" label="Group by"><select id="a-by" value=${by} onChange=${(e) => setBy(e.currentTarget.value)}>${GROUP_BYS.map((g) => html`<option value=${g}>${g}</option>`)}</select></${Field}>
      <${Field} id="a-metric" label="Metric"><select id="a-metric" value=${metric} onChange=${(e) => setMetric(e.currentTarget.value)}>${Object.entries(METRICS).map(([k, m]) => html`<option value=${k}>${m.label}</option>`)}</select></${Field}>
      <${Field} id="a-range" label="Range"><select id="a-range" value=${range} onChange=${(e) => setRange(e.currentTarget.value)}>${Object.keys(RANGES).map((r) => html`<option value=${r}>last ${r}</option>`)}</select></${Field}>
      <div class="row"><button class="primary" type="submit">Refresh</button></div>
    </form>
    <${ErrorBox} error=${times.error ?? totals.error} />
    ${times.data && top.length === 0 && html`<p>No requests in this range.</p>`}
    ${times.data && top.length > 0 && html`
      <${Chart} title=${`${METRICS[metric].label} over time, by ${by}`} data=${main} series=${top} fmt=${METRICS[metric].fmt} />
      <${Chart} title=${`Latency of ${by} ${busiest} (ms)`} data=${latency} series=${['p50', 'p95', 'p99']} fmt=${(v) => num(v)} />`}
    ${totals.data && html`<h2>By ${by}, last ${range}</h2>
      <${Table} caption=${`Totals by ${by}`} rowKey=${(g) => nameOf(g, by)} rows=${totals.data.data} columns=${[
        { label: by, render: (g) => nameOf(g, by) },
        { label: 'Requests', render: (g) => num(g.requests) },
        { label: 'Cost', render: (g) => usd(g.cost) },
        { label: 'Tokens', render: (g) => num(g.total_tokens) },
        { label: 'p50 / p95 / p99 ms', render: (g) => `${num(g.p50_latency)} / ${num(g.p95_latency)} / ${num(g.p99_latency)}` },
        { label: 'Errors', render: (g) => num(g.error_count) },
        { label: 'Cache hits', render: (g) => `${num(g.cache_hit_rate, 1)} %` },
      ]} />`}
  </div>`;
}
