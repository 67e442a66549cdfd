// Gateway API keys: list (masked, as the API answers them), create, rotate, delete. A created or
// rotated key's secret is the answer's `key`, shown once in SecretOnce and then dropped.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { time } from '../format.js';
import { ErrorBox, Field, html, SecretOnce, Table, useAction, useLoad } from '../ui.js';

const DEFAULT_SCOPES = 'completions.write, logs.list, logs.view, analytics.view';

function CreateKey({ onCreated }) {
  const [form, setForm] = useState({ name: '', type: 'workspace', sub_type: 'service', workspace_id: '', user_id: '', scopes: DEFAULT_SCOPES, description: '' });
  const { error, busy, run } = useAction();
  const set = (k) => (e) => setForm({ ...form, [k]: e.currentTarget.value });
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      const body = { name: form.name, scopes: form.scopes.split(',').map((s) => s.trim()).filter(Boolean) };
      if (form.description !== '') body.description = form.description;
      if (form.type === 'workspace' && form.workspace_id !== '') body.workspace_id = form.workspace_id;
      if (form.sub_type === 'user') body.user_id = form.user_id;
      const made = await api(`/api-keys/${form.type}/${form.sub_type}`, { body });
      setForm({ ...form, name: '', description: '' });
      onCreated(made, 'New key');
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="create-key-title">
    <h2 id="create-key-title">Create a key</h2>
    <${Field} id="k-name" label="Name"><input id="k-name" required value=${form.name} onInput=${set('name')} /></${Field}>
    <${Field} id="k-type" label="Level"><select id="k-type" value=${form.type} onChange=${set('type')}><option value="workspace">workspace</option><option value="organisation">organisation</option></select></${Field}>
    <${Field} id="k-sub" label="Kind"><select id="k-sub" value=${form.sub_type} onChange=${set('sub_type')}><option value="service">service</option><option value="user">user</option></select></${Field}>
    ${form.type === 'workspace' && html`<${Field} id="k-ws" label="Workspace id or slug (empty: the default)"><input id="k-ws" value=${form.workspace_id} onInput=${set('workspace_id')} /></${Field}>`}
    ${form.sub_type === 'user' && html`<${Field} id="k-user" label="User id"><input id="k-user" required value=${form.user_id} onInput=${set('user_id')} /></${Field}>`}
    <${Field} id="k-scopes" label="Scopes (comma-separated)"><textarea id="k-scopes" rows="3" value=${form.scopes} onInput=${set('scopes')}></textarea></${Field}>
    <${Field} id="k-desc" label="Description"><input id="k-desc" value=${form.description} onInput=${set('description')} /></${Field}>
    <button class="primary" type="submit" disabled=${busy}>Create key</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

export function KeysPage() {
  const list = useLoad(() => api('/api-keys', { query: { limit: 100 } }), []);
  const [secret, setSecret] = useState(null);
  const { error, run } = useAction();
  const shown = (answer, what) => {
    setSecret({ value: answer.key, what: answer.key_transition_expires_at ? `${what} (the old secret works until ${answer.key_transition_expires_at})` : what });
    list.reload();
  };
  const rotate = (k) => run(async () => shown(await api(`/api-keys/${encodeURIComponent(k.id)}/rotate`, { body: {} }), `Rotated key “${k.name}”`));
  const remove = (k) => {
    if (!confirm(`Delete key “${k.name}”? Requests with it will be refused.`)) return;
    run(async () => {
      await api(`/api-keys/${encodeURIComponent(k.id)}`, { method: 'DELETE' });
      list.reload();
    });
  };
  return html`<div class="keys">
    ${secret && html`<${SecretOnce} secret=${secret.value} what=${secret.what} onDone=${() => setSecret(null)} />`}
    <${ErrorBox} error=${list.error ?? error} />
    ${list.data && html`<${Table} caption="API keys" rows=${list.data.data} columns=${[
      { label: 'Name', key: 'name' },
      { label: 'Key', render: (k) => html`<code>${k.key}</code>` },
      { label: 'Type', key: 'type' },
      { label: 'Workspace', key: 'workspace_id' },
      { label: 'Status', key: 'status' },
      { label: 'Scopes', render: (k) => k.scopes.length },
      { label: 'Rotated', render: (k) => (k.last_rotated_at ? time(k.last_rotated_at) : '—') },
      { label: 'Actions', render: (k) => html`<div class="row">
        <button onClick=${() => rotate(k)} aria-label=${`Rotate ${k.name}`}>Rotate</button>
        <button class="danger" onClick=${() => remove(k)} aria-label=${`Delete ${k.name}`}>Delete</button></div>` },
    ]} />`}
    <${CreateKey} onCreated=${shown} />
  </div>`;
}
