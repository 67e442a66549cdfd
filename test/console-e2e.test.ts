/**
 * The console in headless Chromium (Debian's package, driven by
 * playwright-core) against a test gateway and a mock OpenAI: sign in, watch
 * a chat request appear in the live log and open its detail, draw a chart,
 * check a config as it is typed, create and rotate a key (each secret shown
 * once, then gone from the page). Screenshots at 1280 px and phone width go
 * to test-output/console/.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { ensureChromium } from './support/chromium.js';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { useGateway } from './support/use-gateway.js';

const SHOTS = fileURLToPath(new URL('../../test-output/console/', import.meta.url));
const browserPath = ensureChromium();
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

describe('the console in a browser', { timeout: 180_000, skip: browserPath.path === null ? browserPath.why : false }, () => {
  const gw = useGateway();
  let openai: MockOpenAI;
  let browser: Browser;
  /** Page errors and CSP reports seen by any page: the console must cause none. */
  const problems: string[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    openai = await startMockOpenAI({ apiKey: 'sk-console' });
    browser = await chromium.launch({ executablePath: browserPath.path!, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
  });
  after(async () => {
    await browser?.close();
    await openai?.close();
  });

  async function open(viewport: keyof typeof VIEWPORTS): Promise<Page> {
    const page = await browser.newPage({ viewport: VIEWPORTS[viewport] });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && !/status of (4|5)\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${gw.url}/console`);
    return page;
  }

  /** Signs in with the keyboard alone: focus the key field, type, Enter. */
  async function signIn(page: Page, key = ADMIN_KEY): Promise<void> {
    await page.getByLabel('Gateway API key').focus();
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
  }

  const chat = (traceId: string) =>
    gw.call('/chat/completions', {
      headers: { 'x-gateway-provider': 'openai', 'x-gateway-custom-host': openai.url, authorization: 'Bearer sk-console', 'x-gateway-trace-id': traceId },
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the console test' }] },
    });

  it('refuses a wrong key and keeps the right one in session storage only', async () => {
    const page = await open('desktop');
    await signIn(page, 'not-a-key');
    await page.getByRole('alert').filter({ hasText: '401' }).waitFor();
    await page.getByLabel('Gateway API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Live log' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('switchyard.key')), ADMIN_KEY);
    assert.equal(await page.evaluate(() => localStorage.length + document.cookie.length), 0);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Gateway API key').waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('switchyard.key')), null);
    await page.close();
  });

  it('shows a new request in the live log without a reload, and its detail', async () => {
    const page = await open('desktop');
    await signIn(page);
    await page.getByRole('heading', { name: 'Live log' }).waitFor();
    const traceId = `console-e2e-${Date.now()}`;
    const res = await chat(traceId);
    assert.equal(res.status, 200, await res.text());
    // The page polls: the row arrives by itself.
    const row = page.getByRole('row').filter({ hasText: traceId });
    await row.waitFor({ timeout: 15_000 });
    assert.match(await row.innerText(), /200[\s\S]*openai[\s\S]*gpt-4o-mini/);
    await row.getByRole('button').click();
    const detail = page.getByRole('complementary');
    await detail.getByRole('heading', { name: 'Guardrails' }).waitFor();
    const text = await detail.innerText();
    for (const want of ['Timings', 'Total latency', 'Target path', 'Retries', 'Cache status', 'hello from the console test', traceId]) assert.ok(text.includes(want), `detail shows ${want}`);
    // Filters narrow the list: a trace id that matches nothing empties it.
    await page.getByLabel('Trace id').fill('no-such-trace');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await row.waitFor({ state: 'detached' });
    await page.getByLabel('Trace id').fill(traceId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await row.waitFor();
    await row.getByRole('button').click();
    await detail.getByRole('heading', { name: 'Guardrails' }).waitFor();
    await page.screenshot({ path: `${SHOTS}logs-1280.png`, fullPage: true });
    await page.close();

    const phone = await open('phone');
    await signIn(phone);
    await phone.getByRole('row').filter({ hasText: traceId }).waitFor();
    await phone.screenshot({ path: `${SHOTS}logs-390.png`, fullPage: true });
    await phone.getByRole('button', { name: 'Menu' }).click();
    await phone.getByRole('link', { name: 'Analytics' }).click();
    await phone.locator('.uplot canvas').first().waitFor();
    await phone.screenshot({ path: `${SHOTS}analytics-390.png`, fullPage: true });
    await phone.close();
  });

  it('draws the analytics charts from the analytics routes', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await chat(`console-chart-${i}`)).status, 200);
    const page = await open('desktop');
    await signIn(page);
    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.locator('.uplot canvas').nth(1).waitFor({ timeout: 15_000 });
    assert.equal(await page.locator('.uplot').count(), 2, 'the metric over time and the latency percentiles');
    assert.match(await page.locator('.uplot .u-title').first().innerText(), /Requests over time, by model/);
    const totals = page.getByRole('table', { name: 'Totals by model' }).getByRole('row').filter({ hasText: 'gpt-4o-mini' });
    await totals.waitFor();
    assert.match(await totals.innerText(), /gpt-4o-mini\s+4\s/, 'four requests of the model in the last hour');
    await page.getByLabel('Metric').selectOption('p95_latency');
    await page.locator('.u-title', { hasText: 'Latency p95 (ms) over time' }).waitFor();
    await page.screenshot({ path: `${SHOTS}analytics-1280.png`, fullPage: true });
    await page.close();
  });

  it('checks a config with the gateway as it is typed', async () => {
    const page = await open('desktop');
    await signIn(page);
    // The list answers late: what is typed before it arrives stays (the form is not made anew under it).
    let listed!: () => void;
    const listArrived = new Promise<void>((resolve) => (listed = resolve));
    await page.route(/\/v1\/configs(\?|$)/, async (r) => {
      if (r.request().method() !== 'GET') return r.continue();
      await sleep(1000);
      await r.continue();
      setTimeout(listed, 200);
    });
    await page.getByRole('link', { name: 'Configs' }).click();
    const editor = page.locator('#new-config-body');
    await editor.fill('{"strategy": {"mode": "fallback"}, "targets": [{"provider": "openai", "api_key": "sk-x", "retry": {"attempts": 9}}]}');
    await listArrived;
    await page.unroute(/\/v1\/configs(\?|$)/);
    const status = page.locator('#new-config-body-status');
    await status.filter({ hasText: /targets\[0\]\.retry\.attempts/ }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create config' }).isDisabled(), true);
    await editor.fill('{"strategy": {"mode": "fallback"');
    await status.filter({ hasText: /JSON|position|Expected/ }).waitFor();
    await editor.fill('{"provider": "openai", "api_key": "sk-x"}');
    await page.getByText('The gateway accepts this config.').waitFor();
    await page.locator('#new-config-name').fill('from the console');
    await page.getByRole('button', { name: 'Create config' }).click();
    await page.getByRole('heading', { name: /Edit from the console/ }).waitFor();
    assert.ok(!(await page.content()).includes('sk-x"'), 'the saved config comes back masked');
    await page.screenshot({ path: `${SHOTS}configs-1280.png`, fullPage: true });
    await page.close();
  });

  it('creates and rotates a key: each secret shown once, then gone, and each works', async () => {
    const page = await open('desktop');
    await signIn(page);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('console key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByRole('dialog');
    const created = await secretBox.getByLabel('Secret').inputValue();
    assert.ok(created.length >= 20, created);
    assert.equal((await fetch(`${gw.v1}/logs`, { headers: { 'x-gateway-api-key': created } })).status, 200, 'the new key works with its scopes');
    await page.screenshot({ path: `${SHOTS}keys-secret-1280.png`, fullPage: true });
    await secretBox.getByRole('button', { name: /I have stored it/ }).click();
    await secretBox.waitFor({ state: 'detached' });
    const row = page.getByRole('row').filter({ hasText: 'console key' });
    await row.waitFor();
    assert.ok(!(await page.content()).includes(created), 'the secret is not on the page any more');
    assert.match(await row.innerText(), new RegExp(`\\*\\*\\*\\*${created.slice(-4)}`));

    await row.getByRole('button', { name: 'Rotate console key' }).click();
    const rotated = await page.getByRole('dialog').getByLabel('Secret').inputValue();
    assert.notEqual(rotated, created);
    assert.match(await page.getByRole('dialog').innerText(), /old secret works until/);
    await page.getByRole('dialog').getByRole('button', { name: /I have stored it/ }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    const html = await page.content();
    assert.ok(!html.includes(rotated) && !html.includes(created), 'neither secret stays on the page');
    assert.equal((await fetch(`${gw.v1}/logs`, { headers: { 'x-gateway-api-key': rotated } })).status, 200, 'the rotated secret works');
    await page.screenshot({ path: `${SHOTS}keys-1280.png`, fullPage: true });
    await page.close();

    const phone = await open('phone');
    await signIn(phone);
    await phone.getByRole('button', { name: 'Menu' }).click();
    await phone.getByRole('link', { name: 'API keys' }).click();
    await phone.getByRole('row').filter({ hasText: 'console key' }).waitFor();
    await phone.screenshot({ path: `${SHOTS}keys-390.png`, fullPage: true });
    await phone.close();
  });

  it('management pages load; a prompt is made and its render previewed', async () => {
    const page = await open('desktop');
    await signIn(page);
    for (const name of ['Workspaces', 'Virtual keys', 'Integrations', 'Guardrails', 'Rate limits', 'Usage limits']) {
      await page.getByRole('link', { name, exact: true }).click();
      await page.getByRole('heading', { name: 'Create one' }).waitFor();
      assert.equal(await page.getByRole('alert').count(), 0, `${name} loads without an error`);
    }
    await page.getByRole('link', { name: 'Workspaces', exact: true }).click();
    await page.getByRole('button', { name: 'Open default' }).or(page.getByRole('button', { name: /^Open / }).first()).first().click();
    await page.getByRole('heading', { name: 'Change it' }).waitFor();
    await page.getByRole('link', { name: 'Prompts' }).click();
    await page.getByRole('button', { name: 'Create prompt' }).click();
    // Made, listed and opened: its render preview fills the template with the variables.
    await page.getByRole('row').filter({ hasText: 'Greeting' }).waitFor();
    await page.getByRole('button', { name: 'Render', exact: true }).click();
    const rendered = JSON.parse(await page.getByLabel('Rendered body').textContent() ?? '') as { messages: { content: string }[]; temperature: number };
    assert.equal(rendered.messages[0]!.content, 'Say hello to Ada');
    assert.equal(rendered.temperature, 0.2);
    await page.screenshot({ path: `${SHOTS}prompts-1280.png`, fullPage: true });
    await page.close();
  });

  it('caused no page error and no CSP violation', () => {
    assert.deepEqual(problems, []);
  });
});
