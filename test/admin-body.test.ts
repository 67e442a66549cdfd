// Management request bodies: who may call a route is decided before its body is read, and
// the body has a limit of its own (1 MiB), far below the model endpoints'. A model request's
// stored credential is looked up before its body too.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { hashKey } from '../src/http/auth.js';
import { ADMIN_KEY } from './support/gateway.js';
import { assertEnvelope, envelopeOf } from './support/http.js';
import { keyRecord } from './support/keys.js';
import { useGateway } from './support/use-gateway.js';

/**
 * Sends a request's head declaring `declared` body bytes and only the first `sent` of them,
 * and resolves to the answer's status line and body as soon as the server answers.
 */
function answerBeforeBody(url: string, path: string, key: string, declared: number, sent: number, extra = ''): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let got = '';
    socket.setEncoding('latin1');
    socket.on('data', (s: string) => {
      got += s;
      const end = got.indexOf('\r\n\r\n');
      const length = Number(/content-length: (\d+)/i.exec(got)?.[1] ?? NaN);
      if (end !== -1 && got.length >= end + 4 + length) {
        socket.destroy();
        resolve({ status: Number(got.slice(9, 12)), body: got.slice(end + 4, end + 4 + length) });
      }
    });
    socket.on('error', reject);
    socket.setTimeout(3000, () => socket.destroy(new Error(`no answer while the body was unsent; got: ${got.slice(0, 200)}`)));
    socket.write(
      `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\nx-gateway-api-key: ${key}\r\n${extra}content-type: application/json\r\ncontent-length: ${declared}\r\n\r\n` +
        '{"name":"'.padEnd(sent, 'x'),
    );
  });
}

describe('management bodies', () => {
  const gw = useGateway();
  const weak = 'secret-key-without-configs-write';

  before(async () => {
    const workspaceId = (await gw.store.workspaces.default()).id;
    await gw.store.apiKeys.insert(keyRecord({ workspaceId, scopes: ['completions.write'], hash: hashKey(weak) }));
  });

  it('a key without the route’s scope is refused before its body is read', async () => {
    // The key routes too, whose path (an organisation key needs an organisation caller) is checked after.
    // Rotating or claiming another key's secret needs api_keys.rotate: refused before the body too.
    for (const path of ['/v1/configs', '/v1/api-keys/workspace/service', '/v1/api-keys/another-key/rotate', '/v1/api-keys/another-key/rotated-key']) {
      const answer = await answerBeforeBody(gw.url, path, weak, 50_000_000, 64);
      assert.equal(answer.status, 403, path);
      assert.equal(envelopeOf(answer.body).code, 'missing_scope', path);
    }
  });

  it('a model request naming a stored credential its workspace does not have is refused before its body is read', async () => {
    const cases = [
      ['x-gateway-virtual-key: vk-of-no-one\r\n', 'unknown_virtual_key', 'x-gateway-virtual-key'],
      ['x-gateway-provider: @no-such-slug\r\n', 'unknown_provider', 'x-gateway-provider'],
    ] as const;
    for (const [header, code, param] of cases) {
      const answer = await answerBeforeBody(gw.url, '/v1/chat/completions', ADMIN_KEY, 50_000_000, 64, header);
      assert.equal(answer.status, 400, header);
      assert.equal(envelopeOf(answer.body).code, code);
      assert.equal(envelopeOf(answer.body).param, param);
    }
  });

  it('a management body over 1 MiB is a 413 in the envelope, even for an admin', async () => {
    const res = await gw.call('/configs', { body: { name: 'big', config: { provider: 'openai', api_key: 'sk', override_params: { pad: 'x'.repeat(1024 * 1024) } } } });
    assert.equal((await assertEnvelope(res, 413)).code, 'payload_too_large');
  });

  it('a body just under the limit is read as usual', async () => {
    const res = await gw.call('/configs', { body: { name: 'padded', config: { provider: 'openai', api_key: 'sk', override_params: { pad: 'x'.repeat(1000 * 1024) } } } });
    assert.equal(res.status, 201, await res.text());
  });

  it('the admin key is not affected by the weak key’s refusal', async () => {
    const res = await gw.call('/configs', { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    assert.equal(res.status, 200);
  });
});
