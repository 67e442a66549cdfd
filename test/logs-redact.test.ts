// Redaction of what a request log keeps: secret-named fields lose their
// values at any depth, credential-shaped strings are cut out anywhere, text
// bodies (SSE) lose both, ordinary fields (max_tokens, logprobs' token) stay,
// long bodies are cut, and only allow-listed headers are kept. A body with
// nothing to redact is stored as it came (the quick path); escapes cannot
// hide a secret from it: over thousands of generated JSON bodies and SSE
// streams, with secrets placed at random and characters escaped at random,
// logBody removes exactly what a field-by-field walk of the parsed value does.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isSecretName, logBody, redactMetadata, redactText, redactValue, REDACTED, safeHeaders } from '../src/logs/redact.js';

const OPENAI_KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz012345';
const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
const GOOGLE_KEY = `AIza${'B'.repeat(35)}`;
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
const PEM = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';

describe('isSecretName', () => {
  it('knows secret field names in any spelling', () => {
    for (const n of ['api_key', 'apiKey', 'X-Api-Key', 'openai_api_key', 'client_secret', 'password', 'Authorization', 'access_token', 'refreshToken', 'cloud1_secret_access_key', 'cloud1_access_key_id', 'cloud2_service_account_json', 'private_key', 'credentials', 'cookie']) {
      assert.ok(isSecretName(n), n);
    }
  });

  it('leaves ordinary fields alone', () => {
    for (const n of ['model', 'max_tokens', 'max_completion_tokens', 'prompt_tokens', 'total_tokens', 'token', 'messages', 'content', 'key_name', 'temperature']) {
      assert.ok(!isSecretName(n), n);
    }
  });
});

describe('redactText', () => {
  it('cuts credential shapes out of free text', () => {
    const s = `key ${OPENAI_KEY}, aws ${AWS_ID}, google ${GOOGLE_KEY}, header Bearer abc.def-ghi, jwt ${JWT}, pem ${PEM}.`;
    const out = redactText(s);
    for (const secret of [OPENAI_KEY, AWS_ID, GOOGLE_KEY, 'abc.def-ghi', JWT, 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC']) assert.ok(!out.includes(secret), secret);
    assert.ok(out.startsWith(`key ${REDACTED}, aws ${REDACTED}`), out);
  });

  it('removes a private key whose END is missing (the text was cut inside it) to the end of the text', () => {
    assert.equal(redactText('key: -----BEGIN RSA PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC'), `key: ${REDACTED}`);
  });

  it('takes any whitespace JavaScript knows after Bearer', () => {
    for (const space of [' ', '\t', '\v', '\u00a0', '\u2003', '\u2028', '\ufeff']) assert.equal(redactText(`Bearer${space}abcdef`), REDACTED, JSON.stringify(space));
  });

  it('keeps ordinary text as it is', () => {
    const s = 'Tell me about sk-learn and the sky. Tokens: 42.';
    assert.equal(redactText(s), s);
  });
});

describe('logBody', () => {
  it('serialises a parsed body with secret fields replaced at any depth', () => {
    const body = {
      model: 'gpt-4o',
      max_tokens: 10,
      api_key: 'plain-secret',
      messages: [{ role: 'user', content: `my key is ${OPENAI_KEY}` }],
      nested: { deeper: [{ client_secret: { any: 'shape' }, keep: 'me' }] },
    };
    const out = JSON.parse(logBody(body)!);
    assert.equal(out.api_key, REDACTED);
    assert.equal(out.max_tokens, 10);
    assert.equal(out.messages[0].content, `my key is ${REDACTED}`);
    assert.deepEqual(out.nested.deeper[0], { client_secret: REDACTED, keep: 'me' });
    assert.equal(body.api_key, 'plain-secret', 'the caller’s object is not changed');
  });

  it('parses JSON bytes and text, and keeps logprobs tokens', () => {
    const raw = Buffer.from(JSON.stringify({ choices: [{ logprobs: { content: [{ token: 'Hello', logprob: -0.1 }] } }], password: 'hunter2' }));
    const out = JSON.parse(logBody(raw)!);
    assert.equal(out.choices[0].logprobs.content[0].token, 'Hello');
    assert.equal(out.password, REDACTED);
  });

  it('keeps text bodies as text, with secret fields and shapes removed', () => {
    const sse = `data: {"id":"1","choices":[{"delta":{"content":"Hi"}}],"api_key":"abc123"}\n\ndata: {"note":"Bearer zzz.yyy"}\n\ndata: [DONE]\n\n`;
    const out = logBody(sse)!;
    assert.ok(out.includes('"content":"Hi"'));
    assert.ok(out.includes(`"api_key":"${REDACTED}"`), out);
    assert.ok(!out.includes('abc123') && !out.includes('zzz.yyy'), out);
    assert.ok(out.endsWith('data: [DONE]\n\n'));
  });

  it('cuts before it redacts, and removes a secret the cut leaves open', () => {
    const pem = logBody(`{"content":"${PEM.replaceAll('\n', '\\n')}"}`, 40)!;
    assert.ok(!pem.includes('MIIE'), pem);
    assert.match(pem, /…\[cut: \d+ more characters\]$/);
    const field = logBody('{"model":"gpt-4o","api_key":"plain-secret-value"}', 40)!;
    assert.ok(!field.includes('plain-secret'), field);
    assert.ok(field.startsWith('{"model":"gpt-4o","api_key":"[REDACTED]"'), field);
  });

  it('is null without a body, and cuts long ones', () => {
    assert.equal(logBody(undefined), null);
    assert.equal(logBody(null), null);
    assert.equal(logBody(''), null);
    const out = logBody('x'.repeat(100), 10)!;
    assert.equal(out, `${'x'.repeat(10)}…[cut: 90 more characters]`);
  });
});

describe('redaction time is linear in the text', () => {
  // Backtracking took each of these quadratic time: minutes for 1 MiB. The bound is generous, for a busy machine.
  const MiB = 1024 * 1024;
  const fill = (unit: string): string => unit.repeat(Math.ceil(MiB / unit.length)).slice(0, MiB);
  const ADVERSARIAL: Record<string, string> = {
    'private-key starts without an END': fill('-----BEGIN PRIVATE KEY-----'),
    'JWT starts without dots': fill('eyJ-'),
    'Bearer and spaces without a token': `Bearer${' '.repeat(MiB)}`,
    'unclosed JSON strings': fill('"api_key": "'),
  };
  for (const [what, text] of Object.entries(ADVERSARIAL)) {
    it(`1 MiB of ${what}, as text and inside JSON`, () => {
      for (const body of [text, JSON.stringify({ messages: [{ role: 'user', content: text }] })]) {
        const started = performance.now();
        const out = logBody(body)!;
        const ms = performance.now() - started;
        assert.ok(ms < 1000, `${ms.toFixed(0)} ms`);
        assert.ok(out.length < 2 * MiB, `${out.length} characters kept`);
      }
    });
  }
});

describe('logBody: the quick path', () => {
  it('stores a body with nothing to redact as it came, spacing and escapes included', () => {
    // The slow path would re-serialise: spaces gone, \u00e9 decoded.
    for (const s of ['{"model": "gpt-4o",  "messages": [{"role": "user", "content": "Caf\\u00e9?\\nSure."}]}', 'data: {"choices": []}\n\ndata: [DONE]\n\n']) {
      assert.equal(logBody(s), s);
      assert.equal(logBody(Buffer.from(s)), s);
    }
  });

  it('is not fooled by escapes next to or inside a secret', () => {
    const cases: [string, string][] = [
      [`{"content":"my key:\\n${OPENAI_KEY}"}`, OPENAI_KEY], // \n makes a word boundary only once decoded
      [`{"content":"\\u0073k-proj-abcdefghijklmnopqrstuvwxyz"}`, 'abcdefghijklmnopqrstuvwxyz'],
      [`{"api_ke\\u0079":"plain-secret"}`, 'plain-secret'],
      [`{"content":"Bearer\\tabcdef"}`, 'abcdef'],
      [`{"content":"Bearer abc\\/defgh"}`, 'defgh'],
      [`data: {"content":"\\n${OPENAI_KEY}"}\n\ndata: {"api_ke\\u0079":"plain-secret"}\n\n`, OPENAI_KEY],
      [`data: {"api_ke\\u0079":"plain-secret"}\n\n`, 'plain-secret'],
      [`event: x\ndata: {"api_ke\\u0079": "plain-secret", \n`, 'plain-secret'], // a line that is not JSON
    ];
    for (const [body, secret] of cases) {
      const out = logBody(body)!;
      assert.ok(!decoded(out).includes(secret), `${body} → ${out}`);
      assert.ok(out.includes(REDACTED), out);
    }
  });

  it('removes exactly what a walk of the parsed value removes, for generated bodies with secrets at random', () => {
    const rand = random(20260611);
    let quick = 0;
    for (let i = 0; i < 3000; i++) {
      const value = genValue(rand, 0);
      const text = serialise(rand, value);
      const out = logBody(text)!;
      if (out === text) quick++;
      assert.deepEqual(JSON.parse(out), expected(JSON.parse(text)), text);
      for (const secret of PLANTED) assert.ok(!decoded(out).includes(secret), `${secret} in ${out} from ${text}`);
    }
    assert.ok(quick > 300 && quick < 2700, `quick path taken ${quick} times of 3000: the generator should make both kinds`);
  });

  it('does the same for each JSON line of an SSE stream', () => {
    const rand = random(7);
    for (let i = 0; i < 1000; i++) {
      const events = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => genObject(rand, 1));
      const text = `${events.map((e) => `data: ${serialise(rand, e, true)}\n\n`).join('')}data: [DONE]\n\n`;
      const lines = logBody(text)!.split('\n\n');
      assert.equal(lines.length, events.length + 2);
      events.forEach((e, j) => assert.deepEqual(JSON.parse(lines[j]!.slice('data: '.length)), expected(e), text));
      assert.equal(lines[events.length], 'data: [DONE]');
    }
  });
});

describe('redactValue and redactMetadata', () => {
  it('copies errors and metadata without secrets', () => {
    const error = { error: { message: `Incorrect API key provided: ${OPENAI_KEY}`, type: 'invalid_request_error' } };
    assert.deepEqual(redactValue(error), { error: { message: `Incorrect API key provided: ${REDACTED}`, type: 'invalid_request_error' } });
    assert.equal(redactValue(null), null);
    assert.deepEqual(redactMetadata({ env: 'prod', user_api_key: 'x', note: `see ${AWS_ID}` }), { env: 'prod', user_api_key: REDACTED, note: `see ${REDACTED}` });
    assert.equal(redactMetadata(undefined), null);
  });
});

describe('safeHeaders', () => {
  it('keeps only the allow-list', () => {
    const kept = safeHeaders({
      'content-type': 'application/json',
      'user-agent': 'test/1',
      'x-gateway-trace-id': 't-1',
      'x-gateway-provider': '@prod-openai',
      authorization: `Bearer ${OPENAI_KEY}`,
      'x-gateway-api-key': 'gw-secret',
      'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: OPENAI_KEY }),
      'x-gateway-custom-host': 'https://user:pass@example.com',
      cookie: 'session=1',
    });
    assert.deepEqual(kept, { 'content-type': 'application/json', 'user-agent': 'test/1', 'x-gateway-provider': '@prod-openai', 'x-gateway-trace-id': 't-1' });
    assert.equal(safeHeaders({ authorization: 'Bearer x' }), null);
  });
});

/** Deterministic pseudo-random numbers (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

const ORDINARY_NAMES = ['model', 'messages', 'content', 'role', 'max_tokens', 'token', 'prompt_tokens', 'key_name', 'monkey', 'temperature', 'json_schema', 'Asia', 'text'];
const SECRET_NAMES = ['api_key', 'apiKey', 'X-Api-Key', 'client_secret', 'password', 'passwd', 'access_token', 'refreshToken', 'Authorization', 'cookie', 'credentials', 'private_key', 'aws_access_key_id', 'service_account_json'];
/** Credential shapes placed in strings; the parts after a shape's fixed start are what must never show. */
const SHAPES = [OPENAI_KEY, AWS_ID, GOOGLE_KEY, JWT, PEM, 'Bearer abc.def-ghi/jk=='];
const PLANTED = ['abcdefghijklmnopqrstuvwxyz012345', 'IOSFODNN7EXAMPLE', 'B'.repeat(35), 'dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC', 'abc.def-ghi/jk', 'plain-secret-value'];
const WORDS = ['hello', 'the', 'sky', 'sk-learn', 'Asia', 'token', 'é', '日本', '"quoted"', 'back\\slash', 'tab\there', 'line\nbreak', '/path'];
/** What may precede a planted shape: each leaves a word boundary before it once decoded. */
const BEFORE = ['', ' ', '\n', '\t', '"', '(', 'é '];

function genString(rand: () => number): string {
  const words = Array.from({ length: Math.floor(rand() * 4) }, () => pick(rand, WORDS));
  if (rand() < 0.25) words.splice(Math.floor(rand() * (words.length + 1)), 0, pick(rand, BEFORE) + pick(rand, SHAPES));
  return words.join(' ');
}

function genValue(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth >= 3 || r < 0.45) return rand() < 0.7 ? genString(rand) : pick(rand, [1, 0.5, -3, true, false, null]);
  return r < 0.6 ? Array.from({ length: Math.floor(rand() * 3) }, () => genValue(rand, depth + 1)) : genObject(rand, depth + 1);
}

function genObject(rand: () => number, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let n = Math.floor(rand() * 4); n > 0; n--) {
    const secret = rand() < 0.12;
    const name = pick(rand, secret ? SECRET_NAMES : ORDINARY_NAMES);
    out[rand() < 0.5 ? name : name.toUpperCase()] = secret && rand() < 0.5 ? 'plain-secret-value' : genValue(rand, depth);
  }
  return out;
}

/** JSON with random spacing (line breaks unless oneLine) and random characters written as \\uXXXX escapes (any case of hex digits). */
function serialise(rand: () => number, value: unknown, oneLine = false): string {
  const space = (): string => (rand() < 0.2 ? pick(rand, oneLine ? [' ', '\t'] : [' ', '\n  ', '\t']) : '');
  const str = (s: string): string => {
    let out = '"';
    for (const c of s) {
      const plain = JSON.stringify(c).slice(1, -1);
      if (c.length === 1 && rand() < 0.06) {
        const hex = c.charCodeAt(0).toString(16).padStart(4, '0');
        out += `\\u${rand() < 0.5 ? hex : hex.toUpperCase()}`;
      } else out += plain;
    }
    return `${out}"`;
  };
  const ser = (v: unknown): string => {
    if (typeof v === 'string') return str(v);
    if (Array.isArray(v)) return `[${space()}${v.map(ser).join(`,${space()}`)}${space()}]`;
    if (v !== null && typeof v === 'object') return `{${space()}${Object.entries(v).map(([k, x]) => `${str(k)}${space()}:${space()}${ser(x)}`).join(`,${space()}`)}${space()}}`;
    return JSON.stringify(v);
  };
  return ser(value);
}

/** What the log should keep of a parsed value: secret-named fields replaced at any depth, credential shapes cut out of every string. */
function expected(v: unknown): unknown {
  if (typeof v === 'string') return redactText(v);
  if (Array.isArray(v)) return v.map(expected);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, isSecretName(k) && x !== null ? REDACTED : expected(x)]));
}

/** Text with JSON escapes decoded, so a secret spelled with escapes is found too. */
function decoded(s: string): string {
  return s.replace(/\\u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t' })[c] ?? c);
}
