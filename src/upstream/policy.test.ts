// The upstream policy's verdicts, and its connector on loopback. Nothing here connects anywhere but 127.0.0.1.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { fakeDns } from '../../test/support/dns.js';
import { readSettings } from '../settings.js';
import { request as httpRequest, type Agent as HttpAgent } from 'node:http';
import { policedConnector, policedNodeAgents, UpstreamAddressDenied, UpstreamPolicy } from './policy.js';

const policy = (env: Record<string, string> = {}): UpstreamPolicy => new UpstreamPolicy(readSettings(env).upstream);
/** The host of `url` as undici's connector gets it: the WHATWG parser's, IPv6 without brackets. */
const hostOf = (url: string): string => new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
const verdict = (p: UpstreamPolicy, url: string): string => {
  const v = p.host(hostOf(url));
  return v instanceof UpstreamAddressDenied ? 'denied' : v;
};

describe('upstream policy: defaults', () => {
  const p = policy();

  it('metadata and link-local addresses are denied in every notation a URL may write them', () => {
    for (const url of [
      'http://169.254.169.254/',
      'http://2852039166/', // decimal
      'http://0xa9fea9fe/', // hex
      'http://0251.0376.0251.0376/', // octal
      'http://0xa9.0xfe.0xa9.0xfe/',
      'http://169.254.43518/', // a.b.c16
      'http://169.254.169.254./',
      'http://[::ffff:169.254.169.254]/', // IPv4-mapped
      'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
      'http://[64:ff9b::a9fe:a9fe]/', // NAT64
      'http://[fe80::1]/',
      'http://[fd00:ec2::254]/',
      'http://[fd00:ec2::23]/',
      'http://169.254.170.2/',
      'http://100.100.100.200/',
      'http://168.63.129.16/',
      'http://0.0.0.0:8080/',
      'http://0/',
      'http://[::]/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.Google.Internal./',
    ]) {
      assert.equal(verdict(p, url), 'denied', url);
    }
  });

  it('loopback, private and public addresses are allowed; other names are left to their addresses', () => {
    for (const url of ['http://127.0.0.1:11434/', 'http://[::1]/', 'http://10.1.2.3/', 'http://172.16.0.1/', 'http://192.168.1.10/', 'http://[fd12:3456::1]/', 'http://100.64.0.1/', 'http://8.8.8.8/']) {
      assert.equal(verdict(p, url), 'allow', url);
    }
    assert.equal(verdict(p, 'https://api.openai.com/v1'), 'resolve');
    assert.equal(verdict(p, 'http://metadata.google.internal.example.com/'), 'resolve');
  });

  it('a refusal is a 403 naming the host, the address and the rule', () => {
    const denied = p.address('metadata.test', '169.254.169.254');
    assert.ok(denied instanceof UpstreamAddressDenied);
    assert.equal(denied.status, 403);
    assert.equal(denied.code, 'upstream_address_denied');
    assert.match(denied.message, /metadata\.test \(169\.254\.169\.254\).*169\.254\.0\.0\/16 \(denied by default: link-local/);
    assert.equal(p.address('models.test', '10.0.0.7'), null);
  });
});

describe('upstream policy: GATEWAY_UPSTREAM_DENY and _ALLOW', () => {
  it('DENY adds to the defaults; loopback in every notation', () => {
    const p = policy({ GATEWAY_UPSTREAM_DENY: '127.0.0.0/8, ::1' });
    for (const url of ['http://127.0.0.1/', 'http://2130706433/', 'http://0x7f.1/', 'http://0177.0.0.1/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/', 'http://[::1]/']) {
      assert.equal(verdict(p, url), 'denied', url);
    }
    assert.equal(verdict(p, 'http://169.254.169.254/'), 'denied');
    assert.match((p.host('127.0.0.1') as Error).message, /127\.0\.0\.0\/8 \(GATEWAY_UPSTREAM_DENY\)/);
  });

  it('the most specific range decides: ALLOW carves out of DENY, and DENY out of ALLOW', () => {
    const p = policy({ GATEWAY_UPSTREAM_DENY: '10.0.0.0/8,192.168.7.7', GATEWAY_UPSTREAM_ALLOW: '10.1.2.3,192.168.0.0/16' });
    assert.equal(p.address('h', '10.1.2.3'), null);
    assert.ok(p.address('h', '10.1.2.4') instanceof UpstreamAddressDenied);
    assert.equal(p.address('h', '192.168.7.8'), null);
    assert.ok(p.address('h', '192.168.7.7') instanceof UpstreamAddressDenied);
    // IPv4 rules reach the IPv6 forms of their addresses, with the same specificity.
    assert.equal(p.address('h', '::ffff:10.1.2.3'), null);
    assert.ok(p.address('h', '::ffff:10.1.2.4') instanceof UpstreamAddressDenied);
  });

  it('a broad ALLOW does not lift a narrower default denial; the same range does', () => {
    assert.equal(verdict(policy({ GATEWAY_UPSTREAM_ALLOW: '0.0.0.0/0' }), 'http://169.254.169.254/'), 'denied');
    const lifted = policy({ GATEWAY_UPSTREAM_ALLOW: '169.254.0.0/16' });
    assert.equal(verdict(lifted, 'http://169.254.169.254/'), 'allow');
    assert.equal(verdict(lifted, 'http://[fe80::1]/'), 'denied');
    assert.equal(verdict(policy({ GATEWAY_UPSTREAM_ALLOW: '169.254.10.0/24' }), 'http://169.254.169.254/'), 'denied');
  });

  it('an allow-list: DENY everything, ALLOW what may be reached', () => {
    const p = policy({ GATEWAY_UPSTREAM_DENY: '0.0.0.0/0,::/0', GATEWAY_UPSTREAM_ALLOW: '203.0.113.0/24,api.openai.com' });
    assert.equal(p.address('h', '203.0.113.9'), null);
    assert.ok(p.address('h', '198.51.100.1') instanceof UpstreamAddressDenied);
    assert.ok(p.address('h', '2001:db8::1') instanceof UpstreamAddressDenied);
    assert.equal(p.host('api.openai.com'), 'allow');
  });

  it('::/0 is IPv6 only: it does not deny IPv4 addresses', () => {
    const p = policy({ GATEWAY_UPSTREAM_DENY: '::/0' });
    assert.equal(p.address('h', '203.0.113.9'), null);
    assert.ok(p.address('h', '2001:db8::1') instanceof UpstreamAddressDenied);
  });

  it('host names: exact before *.suffix, the longer suffix first, and a name decides before its addresses', () => {
    const p = policy({ GATEWAY_UPSTREAM_DENY: '*.internal,10.0.0.0/8', GATEWAY_UPSTREAM_ALLOW: 'models.internal,*.gpu.internal' });
    assert.equal(p.host('models.internal'), 'allow');
    assert.equal(p.host('a.gpu.internal'), 'allow');
    assert.ok(p.host('vault.internal') instanceof UpstreamAddressDenied);
    assert.ok(p.host('vault.internal.') instanceof UpstreamAddressDenied);
    assert.equal(p.host('internal'), 'resolve');
    // models.internal is allowed by name, whatever 10.x address it resolves to; the connector then checks no address.
    assert.ok(p.address('models.internal', '10.0.0.9') instanceof UpstreamAddressDenied);
    assert.equal(policy({ GATEWAY_UPSTREAM_ALLOW: 'metadata.google.internal' }).host('metadata.google.internal'), 'allow');
  });
});

describe('upstream rules in the environment', () => {
  it('entries are trimmed; empty ones skipped; names lower-cased', () => {
    const { deny, allow } = readSettings({ GATEWAY_UPSTREAM_DENY: ' 10.0.0.0/8 , ,FD00::/8,', GATEWAY_UPSTREAM_ALLOW: 'Models.Example.COM.' }).upstream;
    assert.deepEqual(deny.map((r) => r.text), ['10.0.0.0/8', 'FD00::/8']);
    assert.deepEqual(allow, [{ kind: 'host', name: 'models.example.com', subdomains: false, text: 'Models.Example.COM.' }]);
    assert.deepEqual(readSettings({}).upstream, { deny: [], allow: [] });
  });

  it('a bad entry stops the start, naming the variable and the entry', () => {
    for (const [name, bad] of [
      ['GATEWAY_UPSTREAM_DENY', '10.0.0.0/33'],
      ['GATEWAY_UPSTREAM_DENY', '10.0.0/8'],
      ['GATEWAY_UPSTREAM_DENY', 'fe80::/129'],
      ['GATEWAY_UPSTREAM_DENY', 'fe80::1%eth0'],
      ['GATEWAY_UPSTREAM_DENY', '10.0.0.0/'],
      ['GATEWAY_UPSTREAM_DENY', '10.0.0.0/+8'],
      ['GATEWAY_UPSTREAM_ALLOW', '2852039166'],
      ['GATEWAY_UPSTREAM_ALLOW', '0x7f.1'],
      ['GATEWAY_UPSTREAM_ALLOW', '010.0.0.1'],
      ['GATEWAY_UPSTREAM_ALLOW', 'http://models.internal'],
      ['GATEWAY_UPSTREAM_ALLOW', 'models.internal:8080'],
      ['GATEWAY_UPSTREAM_ALLOW', '*.'],
      ['GATEWAY_UPSTREAM_ALLOW', 'a..b'],
      ['GATEWAY_UPSTREAM_ALLOW', 'bad name'],
      ['GATEWAY_UPSTREAM_ALLOW', 'models.internal/24'],
    ] as const) {
      assert.throws(() => readSettings({ [name]: `127.0.0.1,${bad}` }), new RegExp(`^Error: ${name}: '${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}' is not a CIDR`), bad);
    }
  });
});

/** Runs `body` against a loopback server that counts the connections it accepts. */
async function withListener(body: (port: number, accepted: () => number) => Promise<void>): Promise<void> {
  let accepted = 0;
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    accepted++;
    sockets.push(s);
    s.on('data', () => s.end('HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    await body((server.address() as AddressInfo).port, () => accepted);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Lets the server's accept events in before counting them. */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

describe('policedConnector', () => {
  function connect(connector: ReturnType<typeof policedConnector>, hostname: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      connector({ hostname, host: `${hostname}:${port}`, protocol: 'http:', port: String(port) }, (err, socket) => (err !== null ? reject(err) : resolve(socket as Socket)));
    });
  }

  it('a denied literal never opens a socket; an allowed one connects', () =>
    withListener(async (port, accepted) => {
      await assert.rejects(connect(policedConnector(policy({ GATEWAY_UPSTREAM_DENY: '127.0.0.0/8' })), '127.0.0.1', port), UpstreamAddressDenied);
      (await connect(policedConnector(policy()), '127.0.0.1', port)).destroy();
      await settle();
      assert.equal(accepted(), 1);
    }));

  it('the address checked is the address connected to: a name that rebinds to a denied one is refused at its next connection', () =>
    withListener(async (port, accepted) => {
      const dns = fakeDns({ 'rebind.test': ['127.0.0.1', '169.254.169.254'] });
      const connector = policedConnector(policy(), dns.lookup);
      const first = await connect(connector, 'rebind.test', port);
      assert.equal(first.remoteAddress, '127.0.0.1');
      first.destroy();
      await assert.rejects(connect(connector, 'rebind.test', port), /rebind\.test \(169\.254\.169\.254\)/);
      // One lookup per connection: no separate check whose answer could differ from the one connected to.
      assert.deepEqual(dns.asked, ['rebind.test', 'rebind.test']);
      await settle();
      assert.equal(accepted(), 1);
    }));

  it('a name allowed by ALLOW connects whatever its address; a denied name is never looked up', () =>
    withListener(async (port, accepted) => {
      const dns = fakeDns({ 'models.test': '127.0.0.1', 'other.test': '127.0.0.1', 'blocked.test': '127.0.0.1' });
      const connector = policedConnector(policy({ GATEWAY_UPSTREAM_DENY: '127.0.0.0/8,blocked.test', GATEWAY_UPSTREAM_ALLOW: 'models.test' }), dns.lookup);
      (await connect(connector, 'models.test', port)).destroy();
      await assert.rejects(connect(connector, 'other.test', port), /other\.test \(127\.0\.0\.1\).*127\.0\.0\.0\/8/);
      await assert.rejects(connect(connector, 'blocked.test', port), /blocked\.test refused.*blocked\.test \(GATEWAY_UPSTREAM_DENY\)/);
      assert.deepEqual(dns.asked, ['models.test', 'other.test']);
      await settle();
      assert.equal(accepted(), 1);
    }));
});

describe('policedNodeAgents (the AWS SDK\'s sockets)', () => {
  const get = (agent: HttpAgent, host: string, port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = httpRequest({ host, port, path: '/', agent }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });

  it('a denied literal or a name resolving to a denied address never opens a socket; an allowed one connects', () =>
    withListener(async (port, accepted) => {
      const dns = fakeDns({ 'bucket.test': '127.0.0.1', 'models.test': '127.0.0.1' });
      const denied = policedNodeAgents(policy({ GATEWAY_UPSTREAM_DENY: '127.0.0.0/8', GATEWAY_UPSTREAM_ALLOW: 'models.test' }), dns.lookup);
      await assert.rejects(get(denied.httpAgent, '127.0.0.1', port), UpstreamAddressDenied);
      await assert.rejects(get(denied.httpAgent, 'bucket.test', port), /bucket\.test \(127\.0\.0\.1\)/);
      await assert.rejects(get(denied.httpAgent, '169.254.169.254', port), /denied by default/);
      assert.equal(await get(denied.httpAgent, 'models.test', port), 204);
      const open = policedNodeAgents(policy(), dns.lookup);
      assert.equal(await get(open.httpAgent, 'bucket.test', port), 204);
      for (const a of [denied, open]) {
        a.httpAgent.destroy();
        a.httpsAgent.destroy();
      }
      await settle();
      assert.equal(accepted(), 2);
    }));
});
