// The gateway's files in an S3-compatible bucket (src/batches/s3-storage.ts),
// against a loopback S3 that checks every request's SigV4 signature: put
// (one PUT, or a multipart upload past the part size), read (whole, from an
// offset, at the very end), delete; a wrong secret refused; the settings
// checked; and a gateway keeping its files there, through the OpenAI SDK,
// with a batch whose output file goes to the bucket.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import OpenAI, { toFile } from 'openai';
import { s3Client, S3Storage } from '../src/batches/s3-storage.js';
import { scratchPath } from '../src/batches/storage.js';
import { readSettings, type S3Settings } from '../src/settings.js';
import { engines } from './support/engines.js';
import { ADMIN_KEY } from './support/gateway.js';
import { startMockS3, S3_CREDENTIALS, type MockS3 } from './support/mock-s3.js';
import { useMockOpenAI } from './support/mock-openai.js';
import { expectJson } from './support/tenants.js';
import { useGateway } from './support/use-gateway.js';

let s3: MockS3;
const dir = mkdtempSync(join(tmpdir(), 'switchyard-s3-'));
before(async () => {
  s3 = await startMockS3();
});
after(async () => {
  await s3.close();
  rmSync(dir, { recursive: true, force: true });
});
const settings = (): S3Settings => ({ bucket: s3.bucket, region: s3.region, endpoint: s3.url, prefix: 'files/', forcePathStyle: true });

describe('S3 file storage', () => {
  let storage: S3Storage;
  before(async () => {
    storage = new S3Storage(settings(), dir, s3Client(settings(), S3_CREDENTIALS));
    await storage.init();
  });
  const local = (bytes: Buffer): string => {
    const path = scratchPath(storage, 'test');
    writeFileSync(path, bytes);
    return path;
  };

  it('put streams a small file in one signed PUT under the prefix; read gives it back whole and from an offset; the scratch file is gone', async () => {
    const body = Buffer.from('{"a":1}\n{"b":2}\n');
    const path = local(body);
    s3.calls.length = 0;
    await storage.put('file-sy1', path, body.length);
    assert.equal(existsSync(path), false);
    assert.deepEqual(s3.calls.map((c) => [c.action, c.key]), [['PutObject', 'files/file-sy1']]);
    assert.deepEqual(s3.objects.get('files/file-sy1'), body);
    assert.equal(await text(await storage.read('file-sy1')), body.toString());
    assert.equal(await text(await storage.read('file-sy1', 8)), '{"b":2}\n');
    assert.equal(s3.calls.at(-1)!.range, 'bytes=8-');
    assert.equal(await text(await storage.read('file-sy1', body.length)), '', 'a resume at the end reads nothing');
  });

  it('a file larger than a part goes up as a multipart upload, its parts in order', async () => {
    const body = Buffer.alloc(9 * 1024 * 1024 + 123);
    for (let i = 0; i < body.length; i += 4096) body.writeUInt32BE(i / 4096, i);
    s3.calls.length = 0;
    await storage.put('file-sybig', local(body), body.length);
    assert.deepEqual(
      s3.calls.map((c) => c.action),
      ['CreateMultipartUpload', 'UploadPart', 'UploadPart', 'CompleteMultipartUpload'],
    );
    assert.ok(s3.objects.get('files/file-sybig')!.equals(body));
  });

  it('delete removes the object; reading it then rejects', async () => {
    await storage.put('file-sygone', local(Buffer.from('x\n')), 2);
    await storage.delete('file-sygone');
    assert.equal(s3.objects.has('files/file-sygone'), false);
    await assert.rejects(storage.read('file-sygone'), (e: any) => e.name === 'NoSuchKey');
  });

  it('a wrong secret is refused by the signature check, and nothing is stored', async () => {
    const wrong = new S3Storage(settings(), dir, s3Client(settings(), { ...S3_CREDENTIALS, secretAccessKey: 'not-the-secret' }));
    await assert.rejects(wrong.put('file-sybad', local(Buffer.from('x\n')), 2), (e: any) => e.name === 'SignatureDoesNotMatch');
    assert.equal(s3.objects.has('files/file-sybad'), false);
  });
});

describe('S3 settings (GATEWAY_FILES_S3_*)', () => {
  const env = (extra: Record<string, string>) => ({ GATEWAY_DATA_DIR: dir, ...extra });
  it('read with their defaults: AWS_REGION, path style on with an endpoint', () => {
    assert.equal(readSettings(env({})).batches.s3, undefined);
    assert.deepEqual(readSettings(env({ GATEWAY_FILES_S3_BUCKET: 'my-files', AWS_REGION: 'us-east-2' })).batches.s3, { bucket: 'my-files', region: 'us-east-2', endpoint: undefined, prefix: '', forcePathStyle: false });
    assert.equal(readSettings(env({ GATEWAY_FILES_S3_BUCKET: 'my-files', GATEWAY_FILES_S3_REGION: 'auto', GATEWAY_FILES_S3_ENDPOINT: 'http://minio:9000' })).batches.s3!.forcePathStyle, true);
  });
  it('refused, naming the variable: a bad bucket, no region, a bad endpoint, an S3 setting without a bucket', () => {
    assert.throws(() => readSettings(env({ GATEWAY_FILES_S3_BUCKET: 'My_Files', AWS_REGION: 'x' })), /GATEWAY_FILES_S3_BUCKET/);
    assert.throws(() => readSettings(env({ GATEWAY_FILES_S3_BUCKET: 'files' })), /GATEWAY_FILES_S3_REGION/);
    assert.throws(() => readSettings(env({ GATEWAY_FILES_S3_BUCKET: 'files', AWS_REGION: 'x', GATEWAY_FILES_S3_ENDPOINT: 'ftp://x' })), /GATEWAY_FILES_S3_ENDPOINT/);
    assert.throws(() => readSettings(env({ GATEWAY_FILES_S3_ENDPOINT: 'http://minio:9000' })), /GATEWAY_FILES_S3_ENDPOINT is set but GATEWAY_FILES_S3_BUCKET/);
  });
});

// The gateway reads the credentials as the SDK does, from the standard AWS variables.
process.env.AWS_ACCESS_KEY_ID = S3_CREDENTIALS.accessKeyId;
process.env.AWS_SECRET_ACCESS_KEY = S3_CREDENTIALS.secretAccessKey;

const engine = engines()[0]!;
describe(`a gateway keeping its files in S3 (${engine.name})`, () => {
  const gw = useGateway(engine, {
    env: () => ({ GATEWAY_FILES_S3_BUCKET: s3.bucket, GATEWAY_FILES_S3_REGION: s3.region, GATEWAY_FILES_S3_ENDPOINT: s3.url, GATEWAY_FILES_S3_PREFIX: 'gw/' }),
    settings: {},
  });
  const mock = useMockOpenAI();

  it('upload, content, a batch with its output file, delete: every byte in the bucket', async () => {
    const client = new OpenAI({ apiKey: 'unused', baseURL: gw.v1, defaultHeaders: { 'x-gateway-api-key': ADMIN_KEY }, maxRetries: 0 });
    const input = [0, 1].map((i) => JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hi ${i}` }] } })).join('\n') + '\n';
    const f = await client.files.create({ file: await toFile(Buffer.from(input), 'in.jsonl'), purpose: 'batch' });
    assert.equal(s3.objects.get(`gw/${f.id}`)?.toString(), input);
    assert.equal(await (await client.files.content(f.id)).text(), input);
    const vk = (await expectJson(await gw.call('/virtual-keys', { body: { name: 's3 batch', provider: 'openai', key: 'sk-test', custom_host: mock().url } }), 201)).id as string;
    const b = await client.batches.create({ input_file_id: f.id, endpoint: '/v1/chat/completions', completion_window: 'immediate' as any }, { headers: { 'x-gateway-virtual-key': vk } });
    let done = b;
    for (const end = Date.now() + 15_000; done.status !== 'completed'; ) {
      assert.ok(Date.now() < end, `batch still ${done.status}`);
      await new Promise((r) => setTimeout(r, 50));
      done = await client.batches.retrieve(b.id, { headers: { 'x-gateway-virtual-key': vk } });
    }
    assert.deepEqual(done.request_counts, { total: 2, completed: 2, failed: 0 });
    const out = s3.objects.get(`gw/${done.output_file_id}`)!.toString().trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(out.map((o) => o.custom_id), ['r0', 'r1']);
    await client.files.delete(f.id);
    assert.equal(s3.objects.has(`gw/${f.id}`), false);
  });
});
