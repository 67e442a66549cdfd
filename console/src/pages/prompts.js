// Prompt templates (/v1/prompts, where the gateway has them): list, edit as a new version, and a
// render preview (POST /v1/prompts/:id/render with variables) of the chat body the template makes.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { json, time } from '../format.js';
import { ErrorBox, html, JsonEditor, Table, useAction, useListAndOne } from '../ui.js';

// `parameters` are what a render sends beside the messages (hyperparameters); variables are the render's own.
const TEMPLATE = { name: 'Greeting', string: JSON.stringify([{ role: 'user', content: 'Say hello to {{name}}' }]), parameters: { temperature: 0.2 }, model: 'gpt-4o-mini' };
const VARIABLES = { name: 'Ada' };
const EDITABLE = ['name', 'string', 'parameters', 'model', 'virtual_key', 'version_description'];

function Render({ id }) {
  const [text, setText] = useState(json(VARIABLES));
  const { error, busy, run } = useAction();
  const [out, setOut] = useState(null);
  const submit = (e) => {
    e.preventDefault();
    run(async () => setOut(await api(`/prompts/${encodeURIComponent(id)}/render`, { body: { variables: JSON.parse(text) } })));
  };
  return html`<form class="card" onSubmit=${submit} aria-label="Render preview">
    <h2>Render preview</h2>
    <${JsonEditor} id="p-vars" label="Variables" value=${text} onInput=${setText} rows=${5} />
    <button class="primary" type="submit" disabled=${busy}>Render</button>
    <${ErrorBox} error=${error} />
    ${out && html`<pre class="body" aria-label="Rendered body">${json(out.data ?? out)}</pre>`}
  </form>`;
}

function BodyForm({ id, title, initial, label, onSubmit }) {
  const [text, setText] = useState(json(initial));
  const { error, busy, run } = useAction();
  return html`<form class="card" aria-label=${title} onSubmit=${(e) => {
    e.preventDefault();
    run(() => onSubmit(JSON.parse(text)));
  }}>
    <h2>${title}</h2>
    <${JsonEditor} id=${id} label="JSON body" value=${text} onInput=${setText} />
    <button class="primary" type="submit" disabled=${busy}>${label}</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

export function PromptsPage() {
  const { list, one, selected, select: setSelected, changed } = useListAndOne('/prompts');
  // The new-prompt form starts afresh after each create, and only then: not when the list loads under what is being typed.
  const [created, setCreated] = useState(0);
  // A gateway without the prompts API answers its routes as the proxy or as unknown: say so rather than fail.
  if (list.error && (list.error.status === 404 || list.error.status === 400)) {
    return html`<p role="status">Prompts are not available on this gateway (${list.error.status}: ${list.error.message}).</p>`;
  }
  const p = one.data;
  return html`<div class="prompts">
    <${ErrorBox} error=${list.error ?? one.error} />
    ${list.data && html`<${Table} caption="Prompts" rows=${list.data.data} selected=${selected} onSelect=${(x) => setSelected(x.id)} columns=${[
      { label: 'Name', key: 'name', text: (x) => x.name },
      { label: 'Slug', key: 'slug' },
      { label: 'Model', key: 'model' },
      { label: 'Updated', render: (x) => (typeof x.last_updated_at === 'number' ? time(x.last_updated_at) : x.last_updated_at ?? '') },
    ]} />`}
    ${p && html`
      <${BodyForm} id="edit-prompt" key=${`${p.id}-${p.version_id ?? ''}`} title=${`Edit ${p.name}`} label="Save version"
        initial=${Object.fromEntries(EDITABLE.filter((k) => p[k] !== undefined).map((k) => [k, p[k]]))}
        onSubmit=${async (body) => {
          await api(`/prompts/${encodeURIComponent(p.id)}`, { method: 'PUT', body });
          changed();
        }} />
      <${Render} key=${p.id} id=${p.id} />`}
    <${BodyForm} id="new-prompt" key=${`new-${created}`} title="New prompt" initial=${TEMPLATE} label="Create prompt"
      onSubmit=${async (body) => {
        const made = await api('/prompts', { body });
        setCreated((n) => n + 1);
        setSelected(made.id);
        list.reload();
      }} />
  </div>`;
}
