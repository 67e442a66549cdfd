// The calls the adapter makes before the routed one stop when the client leaves: a walk over
// Vertex's pages looking for `after` ends at the page it was on, never reading the rest.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { Cancel } from '../../../upstream/cancel.js';
import { MAX_PAGES, pageAfter } from './prior.js';

describe('vertex-ai tuning: calls before the routed one', () => {
  it('stop with the request when the client leaves', async () => {
    const signal = new Cancel();
    let pages = 0;
    // Every page has a next one and never the job asked for; the client leaves while the second is asked for,
    // which is still answered: a walk that did not stop would go on to the last page.
    const server = http.createServer((req, res) => {
      const page = ++pages;
      assert.equal(req.headers.authorization, 'Bearer t');
      if (page === 2) signal.abort();
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tuningJobs: [{ name: `projects/p/locations/l/tuningJobs/${page}` }], nextPageToken: `t${page}` })), page === 2 ? 50 : 0);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      const r = await pageAfter(`http://127.0.0.1:${port}/v1/projects/p/locations/l/tuningJobs`, 'Bearer t', 'ftjob-unknown', signal);
      assert.equal(r.ok, false);
      assert.equal(pages, 2, `read ${pages} of up to ${MAX_PAGES} pages`);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
