// The console: sign-in with a gateway key, then pages chosen by the URL's fragment (#/logs).
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, session } from './api.js';
import { ErrorBox, html, useAction } from './ui.js';
import { LogsPage } from './pages/logs.js';
import { AnalyticsPage } from './pages/analytics.js';
import { KeysPage } from './pages/keys.js';
import { ConfigsPage } from './pages/configs.js';
import { PromptsPage } from './pages/prompts.js';
import { ResourcePage, RESOURCES } from './pages/resources.js';

const PAGES = [
  { path: 'logs', label: 'Live log', page: LogsPage },
  { path: 'analytics', label: 'Analytics', page: AnalyticsPage },
  { path: 'keys', label: 'API keys', page: KeysPage },
  { path: 'workspaces', label: 'Workspaces', page: ResourcePage },
  { path: 'virtual-keys', label: 'Virtual keys', page: ResourcePage },
  { path: 'integrations', label: 'Integrations', page: ResourcePage },
  { path: 'configs', label: 'Configs', page: ConfigsPage },
  { path: 'prompts', label: 'Prompts', page: PromptsPage },
  { path: 'guardrails', label: 'Guardrails', page: ResourcePage },
  { path: 'rate-limits', label: 'Rate limits', page: ResourcePage },
  { path: 'usage-limits', label: 'Usage limits', page: ResourcePage },
];

const current = () => location.hash.replace(/^#\/?/, '').split('/')[0] || 'logs';

function SignIn({ onSignedIn }) {
  const [key, setKey] = useState('');
  const { error, busy, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    run(async () => {
      // /v1/models answers every valid key, whatever its scopes: a 401 here means the key is wrong.
      await api('/models', { key, query: { limit: 1 } });
      session.set(key);
      setKey('');
      onSignedIn();
    });
  };
  return html`<main class="signin">
    <h1>Switchyard console</h1>
    <form onSubmit=${submit}>
      <label for="api-key">Gateway API key</label>
      <input id="api-key" type="password" autocomplete="off" required value=${key} onInput=${(e) => setKey(e.currentTarget.value)} />
      <p class="hint">Kept in this tab's session storage only; every page calls the management API with it and its scopes.</p>
      <button class="primary" type="submit" disabled=${busy}>Sign in</button>
      <${ErrorBox} error=${error} />
    </form>
  </main>`;
}

function App() {
  const [signedIn, setSignedIn] = useState(session.get() !== null);
  const [path, setPath] = useState(current());
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    const onHash = () => {
      setPath(current());
      setMenuOpen(false);
    };
    const onOut = () => {
      session.clear();
      setSignedIn(false);
    };
    window.addEventListener('hashchange', onHash);
    window.addEventListener('switchyard:signed-out', onOut);
    return () => {
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('switchyard:signed-out', onOut);
    };
  }, []);
  useEffect(() => {
    document.getElementById('main')?.focus();
  }, [path]);
  if (!signedIn) return html`<${SignIn} onSignedIn=${() => setSignedIn(true)} />`;
  const entry = PAGES.find((p) => p.path === path) ?? PAGES[0];
  const Page = entry.page;
  return html`<div class="shell">
    <a class="skip" href="#main" onClick=${(e) => {
      e.preventDefault();
      document.getElementById('main')?.focus();
    }}>Skip to content</a>
    <header>
      <span class="brand">Switchyard</span>
      <button class="menu" aria-expanded=${menuOpen} aria-controls="nav" onClick=${() => setMenuOpen(!menuOpen)}>Menu</button>
      <nav id="nav" class=${menuOpen ? 'open' : ''} aria-label="Pages">
        <ul>${PAGES.map((p) => html`<li><a href=${`#/${p.path}`} aria-current=${p.path === entry.path ? 'page' : undefined}>${p.label}</a></li>`)}</ul>
      </nav>
      <button class="signout" onClick=${() => window.dispatchEvent(new CustomEvent('switchyard:signed-out'))}>Sign out</button>
    </header>
    <main id="main" tabindex="-1">
      <h1>${entry.label}</h1>
      <${Page} key=${entry.path} resource=${RESOURCES[entry.path]} />
    </main>
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
