// The live request log: the newest page of GET /v1/logs polled every 2 s (new rows marked), older pages
// on demand with `after`, filters as the route takes them, and one log's detail from GET /v1/logs/:id.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { json, num, statusClass, timeMs, usd } from '../format.js';
import { ErrorBox, Field, html, Table, useLoad } from '../ui.js';

const POLL_MS = 2000;
const PAGE = 50;
const FILTERS = [
  ['status', 'Status', 'e.g. 200,4xx'],
  ['provider', 'Provider', 'openai'],
  ['model', 'Model', ''],
  ['config_id', 'Config id', ''],
  ['api_key_id', 'API key id', ''],
  ['trace_id', 'Trace id', ''],
];

/** datetime-local's value (local time) as Unix seconds, which the route takes. */
const seconds = (local) => (local === '' ? undefined : String(Math.floor(new Date(local).getTime() / 1000)));

function Filters({ onApply }) {
  const [draft, setDraft] = useState({});
  const set = (k) => (e) => setDraft({ ...draft, [k]: e.currentTarget.value });
  const submit = (e) => {
    e.preventDefault();
    onApply({ ...draft, start_time: seconds(draft.start_time ?? ''), end_time: seconds(draft.end_time ?? '') });
  };
  return html`<form class="filters" onSubmit=${submit} aria-label="Log filters">
    ${FILTERS.map(([k, label, ph]) => html`<${Field} id=${`f-${k}`} label=${label}><input id=${`f-${k}`} value=${draft[k] ?? ''} placeholder=${ph} onInput=${set(k)} /></${Field}>`)}
    <${Field} id="f-start" label="From"><input id="f-start" type="datetime-local" value=${draft.start_time ?? ''} onInput=${set('start_time')} /></${Field}>
    <${Field} id="f-end" label="To"><input id="f-end" type="datetime-local" value=${draft.end_time ?? ''} onInput=${set('end_time')} /></${Field}>
    <div class="row"><button class="primary" type="submit">Apply filters</button>
    <button type="button" onClick=${() => { setDraft({}); onApply({}); }}>Clear</button></div>
  </form>`;
}

const COLUMNS = [
  { label: 'Time', render: (l) => timeMs(l.created_at_ms), text: (l) => `log ${l.id}` },
  { label: 'Status', render: (l) => html`<span class=${`status ${statusClass(l.status)}`}>${l.status}</span>` },
  { label: 'Provider', key: 'provider' },
  { label: 'Model', key: 'model' },
  { label: 'Latency', render: (l) => `${num(l.latency_ms)} ms` },
  { label: 'Tokens', render: (l) => num(l.total_tokens) },
  { label: 'Cost', render: (l) => usd(l.cost) },
  { label: 'Cache', key: 'cache_status' },
  { label: 'Trace', render: (l) => html`<code>${l.trace_id}</code>` },
];

export function LogsPage() {
  const [filters, setFilters] = useState({});
  const [rows, setRows] = useState([]);
  const [more, setMore] = useState(false);
  const [fresh, setFresh] = useState(new Set());
  const [live, setLive] = useState(true);
  const [error, setError] = useState(null);
  const [selected, setSelected] = useState(null);
  const seen = useRef(new Set());

  // The newest page, merged above what is shown: rows not seen before are marked new.
  useEffect(() => {
    let stop = false;
    let timer;
    seen.current = new Set();
    setRows([]);
    const poll = async () => {
      if (!document.hidden) {
        try {
          const page = await api('/logs', { query: { ...filters, limit: PAGE } });
          if (stop) return;
          const first = seen.current.size === 0;
          const added = page.data.filter((l) => !seen.current.has(l.id));
          for (const l of added) seen.current.add(l.id);
          setFresh(first ? new Set() : new Set(added.map((l) => l.id)));
          setRows((old) => {
            const ids = new Set(page.data.map((l) => l.id));
            return [...page.data, ...old.filter((l) => !ids.has(l.id))];
          });
          if (first) setMore(page.has_more);
          setError(null);
        } catch (e) {
          if (!stop) setError(e);
        }
      }
      if (!stop && live) timer = setTimeout(poll, POLL_MS);
    };
    poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [filters, live]);

  const older = async () => {
    try {
      const page = await api('/logs', { query: { ...filters, limit: PAGE, after: rows.at(-1)?.id } });
      for (const l of page.data) seen.current.add(l.id);
      setRows([...rows, ...page.data]);
      setMore(page.has_more);
    } catch (e) {
      setError(e);
    }
  };

  return html`<div class="logs">
    <${Filters} onApply=${setFilters} />
    <div class="row">
      <label class="check"><input type="checkbox" checked=${live} onChange=${(e) => setLive(e.currentTarget.checked)} /> Live (every ${POLL_MS / 1000} s)</label>
      <span aria-live="polite" class="hint">Shown: ${rows.length}${fresh.size > 0 ? `, ${fresh.size} new` : ''}</span>
    </div>
    <${ErrorBox} error=${error} />
    <div class="split">
      <${Table} caption="Requests, newest first" columns=${COLUMNS} rows=${rows} selected=${selected} onSelect=${(l) => setSelected(l.id)} rowClass=${(l) => (fresh.has(l.id) ? 'new' : '')} />
      ${selected && html`<${LogDetail} id=${selected} onClose=${() => setSelected(null)} />`}
    </div>
    ${more && html`<button onClick=${older}>Load older</button>`}
  </div>`;
}

function Section({ title, children }) {
  return html`<section><h3>${title}</h3>${children}</section>`;
}

function Facts({ items }) {
  return html`<dl class="facts">${items.map(([k, v]) => html`<dt>${k}</dt><dd>${v ?? '—'}</dd>`)}</dl>`;
}

function Hooks({ results }) {
  if (results == null) return html`<p>No guardrails ran.</p>`;
  const hooks = [...(results.before_request_hooks ?? []).map((hk) => ['input', hk]), ...(results.after_request_hooks ?? []).map((hk) => ['output', hk])];
  return html`${hooks.map(([side, hk]) => html`<div class="hook">
      <p><strong>${hk.id}</strong> (${side}): <span class=${hk.verdict ? 'good' : 'bad'}>${hk.verdict ? 'passed' : 'failed'}</span>${hk.deny ? ', denies' : ''}${hk.async ? ', async' : ''}</p>
      <ul>${(hk.checks ?? []).map((c) => html`<li><code>${c.id}</code>: ${c.error ? html`<span class="bad">error ${c.error.message ?? ''}</span>` : c.verdict ? 'passed' : html`<span class="bad">failed</span>`}${c.explanation ? ` — ${c.explanation}` : ''} (${c.execution_time} ms)</li>`)}</ul>
    </div>`)}
    <details><summary>Raw hook results</summary><pre>${json(results)}</pre></details>`;
}

function LogDetail({ id, onClose }) {
  const { data: l, error } = useLoad(() => api(`/logs/${encodeURIComponent(id)}`), [id]);
  const ref = useRef(null);
  useEffect(() => ref.current?.focus(), [id]);
  return html`<aside class="detail" aria-labelledby="detail-title">
    <div class="row"><h2 id="detail-title" tabindex="-1" ref=${ref}>Request ${id}</h2><button onClick=${onClose}>Close</button></div>
    <${ErrorBox} error=${error} />
    ${l && html`
      <${Section} title="Summary"><${Facts} items=${[
        ['Status', l.status], ['Endpoint', l.endpoint], ['Path', `${l.method} ${l.path}`], ['Provider', l.provider], ['Model', l.model],
        ['Workspace', l.workspace_id], ['API key', l.api_key_id], ['Config', l.config_id], ['Virtual key', l.virtual_key_id],
        ['Trace id', l.trace_id], ['Span', l.span_id], ['Error', l.error == null ? null : typeof l.error === 'string' ? l.error : json(l.error)],
      ]} /></${Section}>
      <${Section} title="Timings"><${Facts} items=${[['Total latency', `${num(l.latency_ms)} ms`], ['Upstream time to first byte', l.upstream_ttfb_ms == null ? null : `${num(l.upstream_ttfb_ms)} ms`], ['At', timeMs(l.created_at_ms)]]} /></${Section}>
      <${Section} title="Routing"><${Facts} items=${[['Target path', l.last_used_option_index], ['Retries', l.retry_count], ['Cache status', l.cache_status]]} /></${Section}>
      <${Section} title="Usage"><${Facts} items=${[['Prompt tokens', num(l.prompt_tokens)], ['Completion tokens', num(l.completion_tokens)], ['Total tokens', num(l.total_tokens)], ['Estimated', l.tokens_estimated ? 'yes' : 'no'], ['Cost', usd(l.cost)]]} /></${Section}>
      <${Section} title="Guardrails"><${Hooks} results=${l.hook_results} /></${Section}>
      ${l.metadata !== undefined && html`<${Section} title="Metadata"><pre>${json(l.metadata)}</pre></${Section}>`}
      <${Section} title="Request"><pre class="body">${json(l.request)}</pre></${Section}>
      <${Section} title="Response"><pre class="body">${typeof l.response?.body === 'string' ? l.response.body : json(l.response)}</pre></${Section}>
    `}
  </aside>`;
}
