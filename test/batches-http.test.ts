// Files and gateway-managed batches on both engines, as the official OpenAI SDK
// calls them: upload (multipart, streamed), list, retrieve, content, delete; a
// batch validated, run through the pipeline to a mock upstream, its output and
// error files; bad lines in errors.data; cancel in the middle; a restart in the
// middle (no line sent twice, counted at the mock); a dead runner's lease taken
// over (its claimed lines not sent again); two processes sharing the queue.
import { after, describe, it, before } from 'node:test';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { destination, pino } from 'pino';
import { BatchRepo } from '../src/store/batches.js';
import { engines } from './support/engines.js';
import { ADMIN_KEY } from './support/gateway.js';
import { untilValue as until } from './support/http.js';
import { expectJson } from './support/tenants.js';
import { useMockOpenAI } from './support/mock-openai.js';
import { useGatewayPair } from './support/use-gateway.js';

const BATCHES = { concurrency: 4, maxRunning: 4, pollMs: 50, leaseMs: 2_000, maxFileBytes: 1024 * 1024 };

const line = (i: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ custom_id: `req-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hello ${i}` }], ...extra } });
const jsonl = (n: number) => Array.from({ length: n }, (_, i) => line(i)).join('\n') + '\n';

for (const engine of engines()) {
  describe(`files and batches (${engine.name})`, () => {
    // One files folder for both processes, as a shared volume would be.
    const filesDir = mkdtempSync(join(tmpdir(), 'switchyard-files-'));
    after(() => rmSync(filesDir, { recursive: true, force: true }));
    const [gw, gw2] = useGatewayPair(engine, { settings: { batches: { ...BATCHES, filesDir } }, logger: pino({ level: 'error' }, destination(2)) });
    const mock = useMockOpenAI();
    let vk: string;
    let files: OpenAI;
    let batches: OpenAI;
    before(async () => {
      const made = await expectJson(await gw.call('/virtual-keys', { body: { name: 'batch openai', provider: 'openai', key: 'sk-test', custom_host: mock().url } }), 201);
      vk = made.id;
      files = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
      batches = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
    });
    const upload = async (text: string) => files.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });
    const chatCalls = () => mock().requests.filter((r) => r.path === '/v1/chat/completions');
    const sentIds = () => chatCalls().map((r) => String(r.json.messages[0].content));

    it('files: upload, list, retrieve, content and delete through the OpenAI SDK; the gateway keeps them (nothing reaches the provider)', async () => {
      const text = jsonl(3);
      const f = await upload(text);
      assert.match(f.id, /^file-sy/);
      assert.equal(f.object, 'file');
      assert.equal(f.purpose, 'batch');
      assert.equal(f.filename, 'input.jsonl');
      assert.equal(f.bytes, Buffer.byteLength(text));
      assert.equal((await files.files.retrieve(f.id)).bytes, f.bytes);
      const list = await files.files.list({ purpose: 'batch' });
      assert.ok(list.data.some((x) => x.id === f.id));
      assert.equal(await (await files.files.content(f.id)).text(), text);
      const gone = await files.files.delete(f.id);
      assert.deepEqual([gone.id, gone.deleted], [f.id, true]);
      await assert.rejects(files.files.retrieve(f.id), (e: any) => e.status === 404);
      assert.equal(mock().requests.length, 0);
    });

    it('files: a missing purpose and an unknown one are 400s naming the field; a file over the limit is a 413', async () => {
      await assert.rejects(files.files.create({ file: await toFile(Buffer.from('x'), 'a.jsonl'), purpose: 'nope' as any }), (e: any) => e.status === 400 && e.error?.param === 'purpose');
      const form = new FormData();
      form.append('file', new Blob(['x']), 'a.jsonl');
      const res = await fetch(`${gw.v1}/files`, { method: 'POST', headers: { 'x-gateway-api-key': ADMIN_KEY }, body: form });
      assert.equal((await expectJson(res, 400)).error.param, 'purpose');
      await assert.rejects(files.files.create({ file: await toFile(Buffer.alloc(BATCHES.maxFileBytes + 10, 0x61), 'big.jsonl'), purpose: 'batch' }), (e: any) => e.status === 413);
    });

    it('files: a form cut inside the file part is a 400 and the gateway goes on; an upload the client leaves is dropped, its scratch file removed', async () => {
      const boundary = 'cutcutcut';
      const head = `--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.jsonl"\r\ncontent-type: application/jsonl\r\n\r\n${jsonl(2)}`;
      const headers = { 'x-gateway-api-key': ADMIN_KEY, 'content-type': `multipart/form-data; boundary=${boundary}` };
      // The request ends, the form does not (no closing boundary).
      const cut = await fetch(`${gw.v1}/files`, { method: 'POST', headers, body: head });
      assert.equal((await expectJson(cut, 400)).error.param, 'file');
      assert.equal((await fetch(`${gw.url}/health`)).status, 200);
      // The client leaves halfway through a declared body.
      const scratch = join(filesDir, 'incoming');
      await new Promise<void>((resolve) => {
        const req = request(`${gw.v1}/files`, { method: 'POST', headers: { ...headers, 'content-length': String(head.length + 100_000) } });
        req.on('error', () => resolve());
        req.write(head);
        req.write('x'.repeat(50_000), () => setTimeout(() => (req.destroy(), resolve()), 200));
      });
      const deadline = Date.now() + 5000;
      while (readdirSync(scratch).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(readdirSync(scratch), []);
      assert.equal((await fetch(`${gw.url}/health`)).status, 200);
    });

    it('a batch is refused an inline config that holds a secret (its headers are kept as they came); a saved config is the way', async () => {
      const f = await upload(jsonl(1));
      const config = JSON.stringify({ provider: 'openai', api_key: 'sk-inline-secret', custom_host: mock().url });
      const res = await fetch(`${gw.v1}/batches`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk, 'x-gateway-config': config, 'content-type': 'application/json' },
        body: JSON.stringify({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' }),
      });
      const e = await expectJson(res, 400);
      assert.equal(e.error.param, 'x-gateway-config');
      assert.match(e.error.message, /config\.api_key/);
      assert.doesNotMatch(e.error.message, /sk-inline-secret/);
    });

    it('an immediate batch runs every line through the pipeline: completed, request_counts, the output file in the OpenAI format', async () => {
      const f = await upload(jsonl(5));
      const b = await batches.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' as any, metadata: { job: 'nightly' } });
      assert.match(b.id, /^batch_sy/);
      assert.equal(b.status, 'validating');
      const done = await until('completed', () => batches.batches.retrieve(b.id), (x) => x.status === 'completed');
      assert.deepEqual(done.request_counts, { total: 5, completed: 5, failed: 0 });
      for (const t of ['in_progress_at', 'finalizing_at', 'completed_at'] as const) assert.equal(typeof done[t], 'number', t);
      assert.deepEqual(done.metadata, { job: 'nightly' });
      assert.equal(done.error_file_id, null);
      const out = (await (await files.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(out.map((o) => o.custom_id), ['req-0', 'req-1', 'req-2', 'req-3', 'req-4']);
      assert.equal(out[0].response.status_code, 200);
      assert.equal(out[0].response.body.object, 'chat.completion');
      assert.equal(out[0].error, null);
      assert.equal(chatCalls().length, 5);
      assert.equal(chatCalls()[0]!.headers.authorization, 'Bearer sk-test');
      const listed = await batches.batches.list({ limit: 100 });
      assert.ok(listed.data.some((x) => x.id === b.id));
    });

    it('failed requests go to the error file with their status; the batch still completes', async () => {
      mock().enqueue('/v1/chat/completions', { status: 400, body: { error: { message: 'bad model', type: 'invalid_request_error', code: 'model_not_found' } } });
      const f = await upload(jsonl(1));
      const b = await batches.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' as any });
      const done = await until('completed', () => batches.batches.retrieve(b.id), (x) => x.status === 'completed');
      assert.deepEqual(done.request_counts, { total: 1, completed: 0, failed: 1 });
      assert.equal(done.output_file_id, null);
      const err = JSON.parse((await (await files.files.content(done.error_file_id!)).text()).trim());
      assert.equal(err.custom_id, 'req-0');
      assert.equal(err.response.status_code, 400);
      assert.equal(err.error.code, 'model_not_found');
    });

    it('bad lines fail the batch in validation with errors.data (line, code, message, param), and nothing is sent', async () => {
      const text = [line(0), '{not json', JSON.stringify({ custom_id: 'x', method: 'GET', url: '/v1/chat/completions', body: {} }), line(0), line(4, { stream: true })].join('\n');
      const f = await upload(text);
      const b = await batches.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' as any });
      const done = await until('failed', () => batches.batches.retrieve(b.id), (x) => x.status === 'failed');
      assert.equal(typeof done.failed_at, 'number');
      assert.deepEqual(
        done.errors!.data!.map((e) => [e.line, e.code, e.param]),
        [
          [2, 'invalid_json_line', null],
          [3, 'invalid_method', 'method'],
          [4, 'duplicate_custom_id', 'custom_id'],
          [5, 'invalid_value', 'body.stream'],
        ],
      );
      assert.equal(chatCalls().length, 0);
    });

    it('refuses what it cannot run: no virtual key, an unknown file, a provider file for an immediate batch, a bad window', async () => {
      const f = await upload(jsonl(1));
      const body = { input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' };
      assert.equal((await expectJson(await gw.call('/batches', { body }), 400)).error.param, 'x-gateway-virtual-key');
      const h = { 'x-gateway-virtual-key': vk };
      assert.equal((await expectJson(await gw.call('/batches', { body: { ...body, input_file_id: 'file-sy0000' }, headers: h }), 400)).error.param, 'input_file_id');
      assert.equal((await expectJson(await gw.call('/batches', { body: { ...body, input_file_id: 'file-abc' }, headers: h }), 400)).error.param, 'input_file_id');
      assert.equal((await expectJson(await gw.call('/batches', { body: { ...body, completion_window: '1h' }, headers: h }), 400)).error.param, 'completion_window');
      assert.equal((await expectJson(await gw.call('/batches', { body: { ...body, endpoint: '/v1/moderations' }, headers: h }), 400)).error.param, 'endpoint');
    });

    it('a 24h batch over a provider file with an OpenAI virtual key is the provider\'s: forwarded as sent', async () => {
      mock().enqueue('/v1/batches', { body: { id: 'batch_abc', object: 'batch', status: 'validating', endpoint: '/v1/chat/completions', input_file_id: 'file-abc', completion_window: '24h', created_at: 1 } });
      const b = await batches.batches.create({ input_file_id: 'file-abc', endpoint: '/v1/chat/completions', completion_window: '24h' });
      assert.equal(b.id, 'batch_abc');
      const sent = mock().requests.find((r) => r.path === '/v1/batches')!;
      assert.equal(sent.json.input_file_id, 'file-abc');
      assert.equal(sent.headers.authorization, 'Bearer sk-test');
    });

    it('cancel in the middle: in-flight lines finish, no new ones start; cancelling → cancelled with the finished lines in the output', async () => {
      const n = 40;
      mock().enqueue('/v1/chat/completions', ...Array.from({ length: n }, () => ({ delayMs: 100 })));
      const f = await upload(jsonl(n));
      const b = await batches.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' as any });
      await until('some lines sent', async () => chatCalls().length, (c) => c >= 4);
      const c = await batches.batches.cancel(b.id);
      assert.equal(c.status, 'cancelling');
      assert.equal(typeof c.cancelling_at, 'number');
      const done = await until('cancelled', () => batches.batches.retrieve(b.id), (x) => x.status === 'cancelled');
      assert.equal(typeof done.cancelled_at, 'number');
      const sent = chatCalls().length;
      assert.ok(sent < n, `${sent} of ${n} sent`);
      assert.equal(done.request_counts!.completed + done.request_counts!.failed, sent);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(chatCalls().length, sent, 'no line starts after the cancel');
      await assert.rejects(batches.batches.cancel(b.id), (e: any) => e.status === 409);
    });

    it('a restart in the middle resumes the batch: every line sent exactly once', async () => {
      const n = 60;
      mock().enqueue('/v1/chat/completions', ...Array.from({ length: n }, () => ({ delayMs: 30 })));
      const f = await upload(jsonl(n));
      const b = await batches.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' as any });
      await until('some lines sent', async () => chatCalls().length, (c) => c >= 8);
      await gw2.stop();
      await gw.restart();
      const client = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
      const done = await until('completed', () => client.batches.retrieve(b.id), (x) => x.status === 'completed');
      assert.deepEqual(done.request_counts, { total: n, completed: n, failed: 0 });
      const ids = sentIds();
      assert.equal(ids.length, n);
      assert.equal(new Set(ids).size, n);
      await gw2.start(gw.env);
      batches = client;
      files = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
    });

    it("a runner that died leaves its lease: another process takes the batch over and does not send the lines it had claimed", async () => {
      const f = await upload(jsonl(10));
      // The row as a process that died after claiming lines 0..2 leaves it: written in one transaction, so no runner sees it half made.
      const made = await batches.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' as any, metadata: { template: 'yes' } });
      const template = (await gw.store.batches.load(made.id))!;
      await until('the template done', () => batches.batches.retrieve(made.id), (x) => x.status === 'completed');
      mock().reset();
      const b = { ...template, id: `batch_sy${'0'.repeat(8)}${Date.now().toString(16)}`, status: 'in_progress' as const, total: 10 };
      await gw.store.db.transaction(async (tx) => {
        await new BatchRepo(tx).insert(b);
        await tx.run("UPDATE batches SET status = 'in_progress', total = 10, lease_holder = 'dead', lease_expires_at = 0, claimed_line = 3 WHERE id = ?", [b.id]);
      });
      const done = await until('completed', () => batches.batches.retrieve(b.id), (x) => x.status === 'completed' && x.output_file_id !== null);
      assert.deepEqual(done.request_counts, { total: 10, completed: 7, failed: 3 });
      assert.deepEqual(sentIds().sort(), ['hello 3', 'hello 4', 'hello 5', 'hello 6', 'hello 7', 'hello 8', 'hello 9']);
      const errs = (await (await files.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(errs.map((e) => [e.custom_id, e.error.code]), [0, 1, 2].map((i) => [`req-${i}`, 'batch_line_interrupted']));
    });

    it('two processes share the queue: several batches, each line sent once', async () => {
      mock().reset();
      const other = new OpenAI({ apiKey: 'unused', baseURL: gw2.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY, 'x-gateway-virtual-key': vk }, maxRetries: 0 });
      const made = [];
      for (let i = 0; i < 4; i++) {
        const text = Array.from({ length: 20 }, (_, j) => JSON.stringify({ custom_id: `b${i}-${j}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [{ role: 'user', content: `b${i}-${j}` }] } })).join('\n');
        const f = await upload(text);
        made.push(await (i % 2 === 0 ? batches : other).batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' as any }));
      }
      for (const b of made) {
        const done = await until('completed', () => batches.batches.retrieve(b.id), (x) => x.status === 'completed');
        assert.deepEqual(done.request_counts, { total: 20, completed: 20, failed: 0 });
      }
      const ids = sentIds();
      assert.equal(ids.length, 80);
      assert.equal(new Set(ids).size, 80);
    });
  });
}
