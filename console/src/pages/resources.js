// The management pages that are lists of JSON objects: list, read, create and change (as the API's
// JSON bodies, in an editor that checks the JSON as you type), delete. What reads answer is shown
// as answered: stored credentials come back masked, and a create's body is cleared once it is sent.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { json, time } from '../format.js';
import { ErrorBox, html, JsonEditor, Table, useAction, useListAndOne } from '../ui.js';

const common = [
  { label: 'Name', render: (r) => r.name ?? r.id, text: (r) => r.name ?? r.id },
  { label: 'Slug', key: 'slug' },
  { label: 'Status', key: 'status' },
  { label: 'Workspace', key: 'workspace_id' },
  { label: 'Created', render: (r) => (typeof r.created_at === 'number' ? time(r.created_at) : r.created_at) },
];

const POLICY_FIELDS = ['name', 'conditions', 'group_by', 'status', 'fail_mode'];

/** Per page: where it lives, what a new one looks like, which fields of a read a change may send. */
export const RESOURCES = {
  workspaces: {
    path: '/workspaces',
    template: { name: 'Team', description: 'What this workspace is for' },
    editable: ['name', 'description', 'status'],
  },
  'virtual-keys': {
    path: '/virtual-keys',
    template: { name: 'OpenAI production', provider: 'openai', key: 'sk-…' },
    editable: ['name', 'note'],
  },
  integrations: {
    path: '/integrations',
    template: { name: 'OpenAI', ai_provider_id: 'openai', key: 'sk-…' },
    editable: ['name', 'description', 'configurations', 'pricing_adjustments'],
  },
  guardrails: {
    path: '/guardrails',
    // This route pages by page number, as the spec has it.
    query: { page_size: 100 },
    template: { name: 'No card numbers', checks: [{ id: 'default.regexMatch', parameters: { rule: '\\d{16}', not: true } }], actions: { deny: true } },
    editable: ['name', 'checks', 'actions', 'status'],
  },
  'rate-limits': {
    path: '/policies/rate-limits',
    template: { name: '100 requests a minute per key', conditions: [{ key: 'api_key', value: '*' }], group_by: [{ key: 'api_key' }], type: 'requests', unit: 'rpm', value: 100 },
    editable: [...POLICY_FIELDS, 'type', 'unit', 'value'],
  },
  'usage-limits': {
    path: '/policies/usage-limits',
    template: { name: '$50 a month per key', conditions: [{ key: 'api_key', value: '*' }], group_by: [{ key: 'api_key' }], type: 'cost', credit_limit: 50, periodic_reset: 'monthly' },
    editable: [...POLICY_FIELDS, 'credit_limit', 'alert_threshold', 'periodic_reset', 'periodic_reset_days', 'next_usage_reset_at'],
  },
};

const pick = (obj, keys) => Object.fromEntries(keys.filter((k) => obj[k] !== undefined).map((k) => [k, obj[k]]));

function Editor({ id, title, initial, submitLabel, onSubmit, onDone }) {
  const [text, setText] = useState(json(initial));
  const { error, busy, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      await onSubmit(JSON.parse(text));
      onDone();
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-label=${title}>
    <h2>${title}</h2>
    <${JsonEditor} id=${id} label="JSON body" value=${text} onInput=${setText} problem=${error?.param ? `${error.param}: ${error.message}` : null} />
    <button class="primary" type="submit" disabled=${busy}>${submitLabel}</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

export function ResourcePage({ resource: r }) {
  const { list, one, selected, select: setSelected, changed } = useListAndOne(r.path, r.query);
  // Editors start again from their initial body when this changes: after a create, the body sent (and any secret in it) is gone.
  const [made, setMade] = useState(0);
  const { error, run } = useAction();
  const remove = () => {
    if (!confirm(`Delete ${selected}?`)) return;
    run(async () => {
      await api(`${r.path}/${encodeURIComponent(selected)}`, { method: 'DELETE' });
      setSelected(null);
      list.reload();
    });
  };
  return html`<div class="resource">
    <${ErrorBox} error=${list.error ?? error} />
    ${list.data && html`<${Table} caption=${r.path} rows=${list.data.data} columns=${common} selected=${selected} onSelect=${(x) => setSelected(x.id)} />`}
    ${list.data?.data.length === 0 && html`<p>None yet.</p>`}
    ${one.data && html`<section class="card" aria-labelledby="read-title">
      <div class="row"><h2 id="read-title">${one.data.name ?? one.data.id}</h2>
        <button onClick=${() => setSelected(null)}>Close</button>
        <button class="danger" onClick=${remove}>Delete</button></div>
      <details><summary>As stored (secrets masked)</summary><pre>${json(one.data)}</pre></details>
    </section>
    <${Editor} key=${`${selected}-${JSON.stringify(one.data)}`} id="edit-body" title="Change it" initial=${pick(one.data, r.editable)} submitLabel="Save changes"
      onSubmit=${(body) => api(`${r.path}/${encodeURIComponent(selected)}`, { method: 'PUT', body })}
      onDone=${changed} />`}
    <${ErrorBox} error=${one.error} />
    <${Editor} key=${`create-${made}`} id="create-body" title="Create one" initial=${r.template} submitLabel="Create"
      onSubmit=${async (body) => {
        const answer = await api(r.path, { body });
        if (answer?.id) setSelected(answer.id);
      }}
      onDone=${() => { setMade(made + 1); list.reload(); }} />
  </div>`;
}
