// Graceful shutdown of the real process: on SIGTERM the gateway stops accepting
// connections, lets in-flight streams finish within GATEWAY_SHUTDOWN_GRACE_MS, and exits 0.
import { beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { useMockOpenAI, type MockOpenAI } from './support/mock-openai.js';
import { useSpawnedGateway, type GatewayProcess } from './support/process.js';

const KEY = 'shutdown-admin-key-0123456789abcdef';

/** Resolves true when a TCP connection is refused, false when it is accepted. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

/** Streams a chat completion, calling onFirst once the first event is in; collects the data lines. */
async function stream(gw: GatewayProcess, mock: MockOpenAI, onFirst: () => void): Promise<{ events: string[]; error: unknown }> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': KEY,
      'x-gateway-provider': 'openai',
      'x-gateway-custom-host': mock.url,
    },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], stream: true }),
  });
  assert.equal(res.status, 200);
  const events: string[] = [];
  let buf = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) !== -1) {
        events.push(buf.slice(0, i).replace(/^data: /, ''));
        buf = buf.slice(i + 2);
        if (events.length === 1) onFirst();
      }
    }
  } catch (error) {
    return { events, error };
  }
  return { events, error: null };
}

/** p, or a failure after ms that shows what the gateway said (its drain is logged at info). */
function within<T>(p: Promise<T>, ms: number, what: string, gw: GatewayProcess): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms\nstdout: ${gw.stdout()}\nstderr: ${gw.stderr()}`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe('graceful shutdown', { timeout: 60_000 }, () => {
  const useMock = useMockOpenAI({ name: 'mock' });
  const start = useSpawnedGateway('switchyard-shutdown-', { GATEWAY_ADMIN_API_KEY: KEY, LOG_LEVEL: 'info' });
  let mock: MockOpenAI;
  beforeEach(() => (mock = useMock()));

  it('SIGTERM mid-stream: the stream completes, new connections are refused, exit 0', async () => {
    const proc = await start();
    const sse = Array.from({ length: 10 }, (_, i) => JSON.stringify({ i }));
    mock.enqueue('/v1/chat/completions', { sse, chunkDelayMs: 100 }); // ~1 s
    let signalledAt = 0;
    const streamed = stream(proc, mock, () => {
      signalledAt = performance.now();
      proc.child.kill('SIGTERM');
    });

    // While the stream still runs, the listener goes away.
    let refusedAt = 0;
    const deadline = performance.now() + 5000;
    while (refusedAt === 0) {
      assert.ok(performance.now() < deadline, signalledAt === 0 ? 'no stream event within 5 s' : 'still accepting connections long after SIGTERM');
      await sleep(20);
      if (signalledAt !== 0 && (await refused(proc.port))) refusedAt = performance.now();
    }

    const { events, error } = await within(streamed, 10_000, 'the stream did not end', proc);
    const doneAt = performance.now();
    assert.equal(error, null);
    assert.deepEqual(events, [...sse, '[DONE]']);
    assert.ok(refusedAt < doneAt - 300, `refused at +${(refusedAt - signalledAt).toFixed(0)} ms, stream done at +${(doneAt - signalledAt).toFixed(0)} ms`);

    const { code, signal } = await within(proc.exited, 10_000, 'the gateway did not exit', proc);
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
  });

  it('the wait is bounded by GATEWAY_SHUTDOWN_GRACE_MS', async () => {
    const proc = await start({ GATEWAY_SHUTDOWN_GRACE_MS: '300' });
    const sse = Array.from({ length: 60 }, (_, i) => JSON.stringify({ i }));
    mock.enqueue('/v1/chat/completions', { sse, chunkDelayMs: 100 }); // ~6 s
    let signalledAt = 0;
    const streamed = stream(proc, mock, () => {
      signalledAt = performance.now();
      proc.child.kill('SIGTERM');
    });
    const { code } = await proc.exited;
    const took = performance.now() - signalledAt;
    assert.equal(code, 0);
    // Well under the stream's ~6 s, with room for a loaded machine (CI shares its cores): the drain of two
    // workers, then the log writer's and the store's close.
    assert.ok(took < 4000, `exited ${took.toFixed(0)} ms after SIGTERM`);

    // The cut stream ends early, without [DONE], and the provider call is aborted too.
    const { events } = await streamed;
    assert.ok(events.length < sse.length, `${events.length} events`);
    assert.notEqual(events.at(-1), '[DONE]');
    await mock.waitForAbortedStreams(1, 2000);
  });
});
