/**
 * How the gateway serves the console at /console (src/http/console.ts): the
 * built page and bundles with their content types, cache headers and strict
 * CSP, revalidation by ETag, and nothing outside console/dist however the
 * path is written.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { CONSOLE_CSP } from '../src/http/console.js';
import { assertEnvelope } from './support/http.js';
import { useGateway } from './support/use-gateway.js';

/** A request sent with its path exactly as written (fetch would normalise `..`). */
function raw(base: string, path: string, method = 'GET'): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

describe('the console at /console', () => {
  const gw = useGateway();

  it('serves the page at /console and /console/, with a strict CSP, no inline script, and no cache', async () => {
    for (const path of ['/console', '/console/']) {
      const res = await fetch(gw.url + path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(res.headers.get('content-security-policy'), CONSOLE_CSP);
      assert.match(CONSOLE_CSP, /script-src 'self'(;|$)/);
      assert.doesNotMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      const page = await res.text();
      // Every script is a file of this origin: none is written into the page.
      assert.deepEqual([...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)].map((m) => m[2]!.trim()), ['']);
      assert.match(page, /<script type="module" src="\/console\/app-[A-Z0-9]+\.js">/);
    }
  });

  it('serves the hashed bundles with their content types, kept a year, revalidated by ETag', async () => {
    const page = await (await fetch(`${gw.url}/console`)).text();
    const js = /src="(\/console\/app-[A-Z0-9]+\.js)"/.exec(page)![1]!;
    const css = /href="(\/console\/style-[A-Z0-9]+\.css)"/.exec(page)![1]!;
    for (const [path, type] of [
      [js, 'text/javascript; charset=utf-8'],
      [css, 'text/css; charset=utf-8'],
    ] as const) {
      const res = await fetch(gw.url + path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('content-type'), type);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      const body = await res.arrayBuffer();
      assert.equal(Number(res.headers.get('content-length')), body.byteLength);
      const etag = res.headers.get('etag')!;
      const again = await fetch(gw.url + path, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304);
      assert.equal((await again.arrayBuffer()).byteLength, 0);
      const head = await raw(gw.url, path, 'HEAD');
      assert.equal(head.status, 200);
      assert.equal(head.body, '');
    }
  });

  it('answers nothing outside console/dist: traversal in any spelling is a 404 envelope', async () => {
    for (const path of [
      '/console/../package.json',
      '/console/../../package.json',
      '/console/%2e%2e/package.json',
      '/console/..%2fpackage.json',
      '/console/%2e%2e%2f%2e%2e%2fpackage.json',
      '/console/..%5c..%5cpackage.json',
      '/console//etc/passwd',
      '/console/%00index.html',
      '/console/index.html%00.js',
      '/console/src/app.js',
      '/console/nope.js',
    ]) {
      const res = await raw(gw.url, path);
      assert.equal(res.status, 404, path);
      assert.equal(JSON.parse(res.body).error.code, 'route_not_found', path);
      assert.equal(res.headers['content-security-policy'], CONSOLE_CSP, path);
      assert.doesNotMatch(res.body, /"name":\s*"switchyard"|root:/, path);
    }
  });

  it('takes only GET and HEAD (405), and needs no key: the page signs in with one', async () => {
    const e = await assertEnvelope(await fetch(`${gw.url}/console`, { method: 'POST', body: '{}' }), 405);
    assert.equal(e.code, 'method_not_allowed');
    assert.equal((await fetch(`${gw.url}/console/`, { headers: { 'x-gateway-api-key': 'wrong' } })).status, 200);
    // /consoles is not the console.
    assert.equal((await fetch(`${gw.url}/consoles`)).status, 404);
  });
});
