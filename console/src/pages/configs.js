// Saved configs: list, read (secrets masked), and an editor that checks the config as you type with
// the gateway's own rules (POST /v1/configs/validate: the schema and the checks a save applies).
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { json, time } from '../format.js';
import { ErrorBox, Field, html, JsonEditor, Table, useAction, useListAndOne } from '../ui.js';

const TEMPLATE = { strategy: { mode: 'fallback' }, targets: [{ virtual_key: 'openai-prod' }, { virtual_key: 'anthropic-prod' }] };
const CHECK_DELAY_MS = 300;

/** The gateway's verdict on `text`, asked for once typing pauses: null (valid), a message, or 'checking'. */
function useVerdict(text) {
  const [verdict, setVerdict] = useState(null);
  useEffect(() => {
    let config;
    try {
      config = JSON.parse(text);
    } catch {
      setVerdict(null); // the editor shows the JSON error itself
      return undefined;
    }
    let live = true;
    setVerdict('checking');
    const timer = setTimeout(() => {
      api('/configs/validate', { body: { config } }).then(
        () => live && setVerdict(null),
        (e) => live && setVerdict(e.param ? `${e.param.replace(/^config\.?/, '') || 'config'}: ${e.message.replace(/^config\.?[^:]*: /, '')}` : e.message),
      );
    }, CHECK_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text]);
  return verdict;
}

function ConfigEditor({ id, initial, name: initialName, onSave, saveLabel }) {
  const [text, setText] = useState(json(initial));
  const [name, setName] = useState(initialName ?? '');
  const verdict = useVerdict(text);
  const { error, busy, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(() => onSave(name, JSON.parse(text)));
  };
  return html`<form class="card" onSubmit=${submit} aria-label=${saveLabel}>
    <${Field} id=${`${id}-name`} label="Name"><input id=${`${id}-name`} required value=${name} onInput=${(e) => setName(e.currentTarget.value)} /></${Field}>
    <${JsonEditor} id=${`${id}-body`} label="Config (JSON)" value=${text} onInput=${setText} problem=${verdict === 'checking' ? null : verdict} rows=${18} />
    <p class="hint" aria-live="polite">${verdict === 'checking' ? 'Checking with the gateway…' : verdict === null ? 'The gateway accepts this config.' : ''}</p>
    <button class="primary" type="submit" disabled=${busy || verdict !== null}>${saveLabel}</button>
    <${ErrorBox} error=${error} />
  </form>`;
}

export function ConfigsPage() {
  const { list, one, selected, select: setSelected, changed } = useListAndOne('/configs');
  // The new-config form starts afresh after each create, and only then: not when the list loads under what is being typed.
  const [created, setCreated] = useState(0);
  return html`<div class="configs">
    <${ErrorBox} error=${list.error ?? one.error} />
    ${list.data && html`<${Table} caption="Saved configs" rows=${list.data.data} selected=${selected} onSelect=${(c) => setSelected(c.id)} columns=${[
      { label: 'Name', key: 'name', text: (c) => c.name },
      { label: 'Slug', render: (c) => html`<code>${c.slug}</code>` },
      { label: 'Version', key: 'version' },
      { label: 'Default', render: (c) => (c.is_default ? 'yes' : '') },
      { label: 'Status', key: 'status' },
      { label: 'Updated', render: (c) => time(c.last_updated_at) },
    ]} />`}
    ${one.data && html`<h2>Edit ${one.data.name} (version ${one.data.version})</h2>
      <p class="hint">Masked secrets (<code>********</code>) keep the stored secret when saved back.</p>
      <${ConfigEditor} id="edit-config" key=${`${one.data.id}-${one.data.version}`} initial=${one.data.config} name=${one.data.name} saveLabel="Save as a new version"
        onSave=${async (name, config) => {
          await api(`/configs/${encodeURIComponent(one.data.id)}`, { method: 'PUT', body: { name, config } });
          changed();
        }} />`}
    <h2>New config</h2>
    <${ConfigEditor} id="new-config" key=${`new-${created}`} initial=${TEMPLATE} saveLabel="Create config"
      onSave=${async (name, config) => {
        const made = await api('/configs', { body: { name, config } });
        setCreated((n) => n + 1);
        setSelected(made.id);
        list.reload();
      }} />
  </div>`;
}
