// The switchyard command, run as a child process as a user runs it, against a
// test gateway: --help on each command, the documented exit codes (0 done,
// 1 refused or invalid, 2 usage, 3 unreachable), keys created, listed and
// rotated (the secrets work on the gateway), configs validated offline with
// the gateway's own validator, the request logs followed as they are
// written, and `start` serving until SIGTERM.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { ADMIN_KEY } from './support/gateway.js';
import { engines } from './support/engines.js';
import { freePort, until } from './support/http.js';
import { startMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { useGateway } from './support/use-gateway.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const PACKAGE = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')) as { bin: Record<string, string> };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The command's environment: none of the caller's SWITCHYARD_* or gateway variables. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(SWITCHYARD_|GATEWAY_|PORT$|HOST$|DATABASE_URL$|REDIS_URL$)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

function spawnCli(args: string[], env: Record<string, string> = {}): ChildProcess & { out(): string; err(): string } {
  const child = spawn(process.execPath, [CLI, ...args], { env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  return Object.assign(child, { out: () => out, err: () => err });
}

async function run(args: string[], env: Record<string, string> = {}, stdin?: string): Promise<Run> {
  const child = spawnCli(args, env);
  child.stdin!.end(stdin);
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout: child.out(), stderr: child.err() };
}

describe('switchyard: usage', () => {
  it('package.json names the command and its file', () => {
    assert.equal(PACKAGE.bin.switchyard, 'dist/src/cli/main.js');
  });

  it('--help on every command answers its usage and exits 0', async () => {
    for (const args of [['--help'], ['start', '--help'], ['keys', '--help'], ['keys', 'create', '--help'], ['keys', 'list', '--help'], ['keys', 'rotate', '--help'], ['configs', 'validate', '--help'], ['logs', '--help'], ['logs', 'tail', '--help'], ['bench', '--help']]) {
      const r = await run(args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^Usage: switchyard/, args.join(' '));
    }
  });

  it('bad usage exits 2 and says what is wrong', async () => {
    const cases: [string[], RegExp][] = [
      [[], /Usage: switchyard COMMAND/],
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['keys', 'delete'], /unknown command 'keys delete'/],
      [['keys', 'list', '--bogus'], /Unknown option '--bogus'/],
      [['keys', 'list'], /a gateway key is needed/],
      [['keys', 'create', '--key', 'k'], /--name is required/],
      [['keys', 'rotate', '--key', 'k'], /name the key to rotate/],
      [['keys', 'list', '--key', 'k', '--url', 'ftp://x'], /--url must be an http/],
      [['configs', 'validate'], /name one config file/],
      [['configs', 'validate', '/nonexistent/config.json'], /cannot read \/nonexistent\/config.json: ENOENT/],
      [['logs', 'tail', '--key', 'k', '--interval', 'soon'], /--interval must be an integer/],
    ];
    for (const [args, message] of cases) {
      const r = await run(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout + r.stderr, message, args.join(' '));
    }
  });

  it('exits 3 when nothing answers at the URL', async () => {
    const port = await freePort();
    const r = await run(['keys', 'list'], { SWITCHYARD_URL: `http://127.0.0.1:${port}`, SWITCHYARD_API_KEY: 'k' });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, new RegExp(`no answer from the gateway at http://127.0.0.1:${port}`));
  });
});

describe('switchyard configs validate (offline)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };

  it('a valid config: "valid", exit 0', async () => {
    const good = file('good.json', JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'sk-1' }, { provider: 'anthropic', api_key: 'sk-2' }] }));
    const r = await run(['configs', 'validate', good]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'valid\n');
  });

  it('an invalid config: the path and the rule, exit 1 (the gateway validator\'s message)', async () => {
    const bad = file('bad.json', JSON.stringify({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', retry: { attempts: 9 } }] }));
    const r = await run(['configs', 'validate', bad]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /bad\.json: .*targets\[0\]\.retry\.attempts: must be an integer between 0 and 5/);
    const unknown = await run(['configs', 'validate', file('unknown.json', '{"strategy":{"mode":"single"},"retries":3}')]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /retries/);
  });

  it('not JSON: exit 1; from stdin with -', async () => {
    const r = await run(['configs', 'validate', file('text.json', 'strategy: fallback')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not JSON/);
    const piped = await run(['configs', 'validate', '-'], {}, JSON.stringify({ retry: { attempts: 2 } }));
    assert.equal(piped.code, 0, piped.stderr);
  });
});

for (const engine of engines().slice(0, 1)) {
  describe(`switchyard against a gateway (${engine.name})`, { timeout: 60_000 }, () => {
    const gw = useGateway(engine);
    let openai: MockOpenAI;
    before(async () => {
      openai = await startMockOpenAI();
    });
    after(() => openai.close());
    const env = (): Record<string, string> => ({ SWITCHYARD_URL: gw.url, SWITCHYARD_API_KEY: ADMIN_KEY });

    it('keys create, list and rotate: the secrets work, the list shows none', async () => {
      const made = await run(['keys', 'create', '--name', 'cli key', '--scope', 'completions.write', '--scope', 'logs.list', '--type', 'organisation'], env());
      assert.equal(made.code, 0, made.stderr);
      const key = JSON.parse(made.stdout) as { id: string; key: string };
      assert.equal(typeof key.key, 'string');
      const models = await fetch(`${gw.v1}/models`, { headers: { 'x-gateway-api-key': key.key } });
      assert.equal(models.status, 200);
      await models.arrayBuffer();

      // --url and --key override the environment.
      const listed = await run(['keys', 'list', '--url', `${gw.url}/v1`, '--key', ADMIN_KEY, '--limit', '100'], { SWITCHYARD_URL: 'http://127.0.0.1:1' });
      assert.equal(listed.code, 0, listed.stderr);
      const page = JSON.parse(listed.stdout) as { data: { id: string; name: string }[] };
      assert.ok(page.data.some((k) => k.id === key.id && k.name === 'cli key'));
      assert.ok(!listed.stdout.includes(key.key), 'no secret in the list');

      const rotated = await run(['keys', 'rotate', key.id, '--transition-ms', '1800000'], env());
      assert.equal(rotated.code, 0, rotated.stderr);
      const fresh = JSON.parse(rotated.stdout) as { id: string; key: string };
      assert.equal(fresh.id, key.id);
      assert.notEqual(fresh.key, key.key);
      // Both secrets work during the transition period.
      for (const secret of [fresh.key, key.key]) {
        const res = await fetch(`${gw.v1}/models`, { headers: { 'x-gateway-api-key': secret } });
        assert.equal(res.status, 200);
        await res.arrayBuffer();
      }
    });

    it("the gateway's refusal: its message, exit 1", async () => {
      const r = await run(['keys', 'rotate', 'no-such-key'], env());
      assert.equal(r.code, 1);
      assert.match(r.stderr, /^switchyard: 404: .*no-such-key/);
      const denied = await run(['keys', 'list'], { SWITCHYARD_URL: gw.url, SWITCHYARD_API_KEY: 'not-a-key' });
      assert.equal(denied.code, 1);
      assert.match(denied.stderr, /^switchyard: 401:/);
    });

    it('logs tail: the last lines, then each new log as it is stored; Ctrl-C ends it with 0', async () => {
      const ask = async (traceId: string): Promise<void> => {
        const res = await fetch(`${gw.v1}/chat/completions`, {
          method: 'POST',
          headers: {
            'x-gateway-api-key': ADMIN_KEY,
            'x-gateway-provider': 'openai',
            'x-gateway-custom-host': openai.url,
            authorization: 'Bearer sk-mock',
            'x-gateway-trace-id': traceId,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
        });
        assert.equal(res.status, 200, await res.clone().text());
        await res.arrayBuffer();
      };
      const stored = async (traceId: string): Promise<void> =>
        until(`log of ${traceId}`, async () => ((await (await gw.call(`/logs?trace_id=${traceId}`)).json()) as { data: unknown[] }).data.length === 1);
      await ask('tail-before-1');
      await ask('tail-before-2');
      await stored('tail-before-2');

      const tail = spawnCli(['logs', 'tail', '--lines', '1', '--interval', '100'], env());
      try {
        const lines = (): { trace_id: string }[] => tail.out().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
        await until('the last line', () => lines().length >= 1);
        assert.deepEqual(lines().map((l) => l.trace_id), ['tail-before-2']);
        await ask('tail-after-1');
        await ask('tail-after-2');
        await until('the new logs', () => lines().length >= 3, 10_000);
        await new Promise((r) => setTimeout(r, 300));
        // Each once, the backlog first (two logs of one millisecond have no order between them).
        const seen = lines().map((l) => l.trace_id);
        assert.equal(seen[0], 'tail-before-2');
        assert.deepEqual(seen.slice(1).sort(), ['tail-after-1', 'tail-after-2']);
      } finally {
        tail.kill('SIGINT');
      }
      const [code] = (await once(tail, 'exit')) as [number | null];
      assert.equal(code, 0, tail.err());
    });
  });
}

describe('switchyard start', { timeout: 60_000 }, () => {
  it('serves until SIGTERM, with --port and --data-dir, and exits 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-cli-start-'));
    const port = await freePort();
    const child = spawnCli(['start', '--port', String(port), '--data-dir', dir], { GATEWAY_ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'warn' });
    try {
      await until('/health', async () => (await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json(), () => null))?.status === 'ok', 15_000);
      const keys = await run(['keys', 'list'], { SWITCHYARD_URL: `http://127.0.0.1:${port}`, SWITCHYARD_API_KEY: ADMIN_KEY });
      assert.equal(keys.code, 0, keys.stderr);
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0, child.err());
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a start that cannot succeed exits 1', async () => {
    const r = await run(['start', '--port', '1'], { GATEWAY_ADMIN_API_KEY: 'short' });
    assert.equal(r.code, 1);
  });
});
