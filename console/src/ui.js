// Shared pieces of the pages: the html tag, errors, a JSON editor, a table, the once-shown secret.
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { api } from './api.js';

export const html = htm.bind(h);

export function ErrorBox({ error }) {
  if (error == null) return null;
  const where = error.param ? html` (<code>${error.param}</code>)` : null;
  return html`<p class="error" role="alert">${error.status ? `${error.status}: ` : ''}${error.message}${where}</p>`;
}

/** Runs `fn` and keeps its error for an ErrorBox; `busy` while it runs. */
export function useAction() {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const run = async (fn) => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run, setError };
}

/** Calls `load` now and whenever `deps` change; `reload()` calls it again. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState({ data: null, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

/** A JSON text area: parse errors show as you type; `check` (optional) adds the gateway's verdict. */
export function JsonEditor({ id, label, value, onInput, problem, rows = 14 }) {
  let parseError = null;
  try {
    JSON.parse(value);
  } catch (e) {
    parseError = e.message;
  }
  const message = parseError ?? problem ?? null;
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <textarea id=${id} class="json" rows=${rows} spellcheck="false" aria-invalid=${message !== null} aria-describedby=${`${id}-status`}
      value=${value} onInput=${(e) => onInput(e.currentTarget.value)}></textarea>
    <p id=${`${id}-status`} class=${message === null ? 'ok-note' : 'error'} aria-live="polite">${message === null ? 'Valid JSON' : message}</p>
  </div>`;
}

/** A table of rows; each row's first cell is a button that selects it (keyboard reachable). */
export function Table({ caption, columns, rows, onSelect, selected, rowKey = (r) => r.id, rowClass }) {
  return html`<div class="table-wrap"><table>
    <caption class="sr-only">${caption}</caption>
    <thead><tr>${columns.map((c) => html`<th scope="col">${c.label}</th>`)}</tr></thead>
    <tbody>${rows.map((r) => html`<tr key=${rowKey(r)} class=${[rowKey(r) === selected ? 'selected' : '', rowClass?.(r) ?? ''].join(' ')}>
      ${columns.map((c, i) => (i === 0 && onSelect ? html`<td><button class="link" onClick=${() => onSelect(r)} aria-label=${`Open ${c.text?.(r) ?? rowKey(r)}`}>${c.render ? c.render(r) : r[c.key]}</button></td>` : html`<td>${c.render ? c.render(r) : r[c.key]}</td>`))}
    </tr>`)}</tbody>
  </table></div>`;
}

/**
 * A secret the gateway answered once (a created or rotated key): shown here
 * until dismissed, then dropped from memory; nothing shows it again.
 */
export function SecretOnce({ secret, what, onDone }) {
  const ref = useRef(null);
  const [copied, setCopied] = useState(false);
  useEffect(() => ref.current?.focus(), []);
  return html`<section class="secret" aria-labelledby="secret-title" role="dialog">
    <h3 id="secret-title">${what}: copy it now</h3>
    <p>This secret is shown once. After you close this box the console cannot show it again.</p>
    <label for="secret-value">Secret</label>
    <input id="secret-value" ref=${ref} readonly value=${secret} onFocus=${(e) => e.currentTarget.select()} />
    <div class="row">
      <button type="button" onClick=${async () => {
        await navigator.clipboard?.writeText(secret).then(() => setCopied(true), () => setCopied(false));
      }}>${copied ? 'Copied' : 'Copy'}</button>
      <button type="button" class="primary" onClick=${onDone}>I have stored it — close</button>
    </div>
  </section>`;
}

export function Field({ id, label, children }) {
  return html`<div class="field"><label for=${id}>${label}</label>${children}</div>`;
}

/**
 * A resource's list and the one object selected in it: `select(id)` opens one,
 * `changed()` reads it (and the list) again after a write.
 */
export function useListAndOne(path, query = { limit: 100 }) {
  const list = useLoad(() => api(path, { query }), [path]);
  const [selected, select] = useState(null);
  const [version, setVersion] = useState(0);
  const one = useLoad(() => (selected === null ? Promise.resolve(null) : api(`${path}/${encodeURIComponent(selected)}`)), [path, selected, version]);
  const changed = () => {
    setVersion((v) => v + 1);
    list.reload();
  };
  return { list, one, selected, select, changed };
}
