/**
 * What can be checked of the deployment without a cluster or a Docker daemon:
 * the Helm chart's plain YAML parses, every value a template reads is in
 * values.yaml (and every value there is read), every variable the chart sets
 * is one the gateway reads; the Dockerfile's stages, user and health check;
 * and the deployment settings (read replica, writer HA mode, OIDC scopes)
 * refused with a message naming the variable.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { readSettings } from '../src/settings.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CHART = join(ROOT, 'deploy/helm/switchyard');
const read = (path: string): string => readFileSync(path, 'utf8');

/** Parses YAML, failing on any error or warning (a duplicate key is an error in `yaml`). */
function parseYaml(text: string, name: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true });
  assert.deepEqual([...doc.errors, ...doc.warnings].map((e) => e.message), [], `${name} parses`);
  return doc.toJS();
}

/** The `.Values.a.b` paths a template reads (also as `$.Values.a.b`). */
function valuePaths(template: string): string[] {
  return [...template.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)].map((m) => m[1]!.slice(1));
}

/** The paths of `paths` that do not lead to a key of `values` (a key whose value is empty or null counts: it is declared). */
function missingValues(paths: readonly string[], values: unknown): string[] {
  return paths.filter((path) => {
    let at: unknown = values;
    for (const key of path.split('.')) {
      if (at === null || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return true;
      at = (at as Record<string, unknown>)[key];
    }
    return false;
  });
}

/** Every leaf path of a values tree (maps are walked; lists and scalars are leaves). */
function leaves(values: unknown, prefix = ''): string[] {
  if (values === null || typeof values !== 'object' || Array.isArray(values) || Object.keys(values).length === 0) return [prefix];
  return Object.entries(values).flatMap(([k, v]) => leaves(v, prefix === '' ? k : `${prefix}.${k}`));
}

function semverAtLeast(version: string, min: readonly [number, number, number]): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(version);
  assert.ok(m !== null, `'${version}' is a semantic version`);
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  for (let i = 0; i < 3; i++) if (v[i] !== min[i]) return v[i]! > min[i]!;
  return true;
}

const templateFiles = readdirSync(join(CHART, 'templates')).filter((f) => f.endsWith('.yaml') || f.endsWith('.tpl'));
const templates = new Map(templateFiles.map((f) => [f, read(join(CHART, 'templates', f))]));
const all = [...templates.values()].join('\n');

describe('Helm chart', () => {
  const chart = parseYaml(read(join(CHART, 'Chart.yaml')), 'Chart.yaml') as Record<string, unknown>;
  const values = parseYaml(read(join(CHART, 'values.yaml')), 'values.yaml');

  it('Chart.yaml: apiVersion v2, version 1.6.0 or later, appVersion the gateway version', () => {
    assert.equal(chart.apiVersion, 'v2');
    assert.equal(chart.name, 'switchyard');
    assert.ok(semverAtLeast(String(chart.version), [1, 6, 0]), `chart version ${String(chart.version)} is at least 1.6.0`);
    assert.equal(chart.appVersion, (JSON.parse(read(join(ROOT, 'package.json'))) as { version: string }).version);
  });

  it('the check of value paths catches a path values.yaml lacks', () => {
    assert.deepEqual(valuePaths('{{ .Values.a.b }} {{ $.Values.c }} {{ toYaml .Values.d.e.f | nindent 2 }}'), ['a.b', 'c', 'd.e.f']);
    const tree = { a: { b: '' }, c: null, d: { e: {} } };
    assert.deepEqual(missingValues(['a.b', 'c', 'd.e', 'd.e.f', 'a.b.c', 'x'], tree), ['d.e.f', 'a.b.c', 'x']);
  });

  it('every value a template reads is declared in values.yaml', () => {
    assert.ok(templates.size >= 6, [...templates.keys()].join(', '));
    for (const [name, text] of templates) {
      assert.deepEqual(missingValues(valuePaths(text), values), [], `${name} reads values that values.yaml does not declare`);
    }
  });

  it('every value in values.yaml is read by a template (no setting that does nothing)', () => {
    const read = new Set(valuePaths(all));
    const unread = leaves(values).filter((leaf) => ![...read].some((p) => leaf === p || leaf.startsWith(`${p}.`)));
    assert.deepEqual(unread, []);
  });

  it('has the Deployment with /health probes, the Service, an autoscaling/v2 HPA, the Secret and the ConfigMap', () => {
    const deployment = templates.get('deployment.yaml')!;
    assert.match(deployment, /kind: Deployment/);
    for (const probe of ['livenessProbe', 'readinessProbe']) {
      assert.match(deployment, new RegExp(`${probe}:\\s+httpGet:\\s+path: /health\\s+port: http`), probe);
    }
    assert.match(deployment, /securityContext:\s+\{\{- toYaml \.Values\.podSecurityContext/);
    assert.match(templates.get('service.yaml')!, /kind: Service/);
    assert.match(templates.get('hpa.yaml')!, /apiVersion: autoscaling\/v2\s+kind: HorizontalPodAutoscaler/);
    assert.match(templates.get('secret.yaml')!, /kind: Secret/);
    assert.match(templates.get('configmap.yaml')!, /kind: ConfigMap/);
    const pod = (values as { podSecurityContext: { runAsNonRoot: boolean; runAsUser: number } }).podSecurityContext;
    assert.equal(pod.runAsNonRoot, true);
    assert.notEqual(pod.runAsUser, 0);
  });

  it('keeps the keys and passwords in the Secret, not the ConfigMap', () => {
    const secret = templates.get('secret.yaml')!;
    const configMap = templates.get('configmap.yaml')!;
    for (const name of ['GATEWAY_ENCRYPTION_KEY', 'GATEWAY_ADMIN_API_KEY', 'DATABASE_URL', 'REDIS_URL', 'DB_READER_PASS']) {
      assert.match(secret, new RegExp(`^\\s+${name}:`, 'm'), `${name} in the Secret`);
      assert.doesNotMatch(configMap, new RegExp(`\\b${name}\\b`), `${name} not in the ConfigMap`);
    }
  });

  it('sets only variables the gateway reads, the reader, HA and OIDC ones among them', () => {
    const set = [...all.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
    for (const name of ['DB_READER_HOST', 'DB_READER_PORT', 'DB_READER_USER', 'DB_READER_PASS', 'DB_WRITER_HA', 'OIDC_CUSTOM_SCOPES']) assert.ok(set.includes(name), name);
    const settingsSource = read(join(ROOT, 'src/settings.ts'));
    const unknown = set.filter((name) => !new RegExp(`\\b${name}\\b`).test(settingsSource));
    assert.deepEqual(unknown, [], 'variables src/settings.ts never reads');
  });
});

describe('Dockerfile', () => {
  const text = read(join(ROOT, 'Dockerfile'));
  // Continuation lines joined, comments dropped: one instruction a line.
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages: string[][] = [];
  for (const line of lines) {
    if (/^FROM\s/i.test(line)) stages.push([]);
    stages.at(-1)?.push(line);
  }
  const last = stages.at(-1)!;
  const instr = (stage: string[], name: string): string[] => stage.filter((l) => new RegExp(`^${name}\\s`, 'i').test(l));

  it('has a build stage and a runtime stage', () => {
    assert.ok(stages.length >= 2, `${stages.length} stages`);
    const build = stages.slice(0, -1).flat().join('\n');
    assert.match(build, /npm ci\b[^\n]*--include=dev/);
    assert.match(build, /npm run build/);
    assert.match(build, /npm prune --omit=dev/);
  });

  it('runs as a non-root user in the last stage', () => {
    const users = instr(last, 'USER');
    assert.ok(users.length > 0, 'the last stage sets USER');
    const user = users.at(-1)!.split(/\s+/)[1]!;
    assert.ok(!['root', '0', '0:0'].includes(user), `USER ${user}`);
    // The USER comes before the command it runs.
    assert.ok(last.indexOf(users.at(-1)!) < last.indexOf(instr(last, 'CMD').at(-1)!));
  });

  it('checks /health with node (the slim image has no curl) and exposes the contract port', () => {
    const health = instr(last, 'HEALTHCHECK');
    assert.equal(health.length, 1);
    assert.match(health[0]!, /CMD \["node"/);
    assert.match(health[0]!, /\/health/);
    assert.doesNotMatch(health[0]!, /curl|wget/);
    assert.deepEqual(instr(last, 'EXPOSE'), [`EXPOSE ${readSettings({}).port}`]);
  });

  it('copies only the built gateway, the console build, the production modules and what they read at run time', () => {
    const copied = instr(last, 'COPY').map((l) => l.split(/\s+/).filter((w) => !w.startsWith('--')).slice(1, -1).join(' '));
    assert.deepEqual(copied.sort(), ['/app/console/dist', '/app/dist', '/app/node_modules', '/app/package.json', '/app/src/catalog/models.json']);
    for (const c of instr(last, 'COPY')) assert.match(c, /--from=build/);
  });

  it('runs what npm start runs: its environment (ENV) and its node flags (CMD)', () => {
    const start = (JSON.parse(read(join(ROOT, 'package.json'))) as { scripts: { start: string } }).scripts.start.split(/\s+/);
    const node = start.indexOf('node');
    const env = instr(last, 'ENV').join(' ');
    for (const assignment of start.slice(0, node)) assert.ok(env.split(/\s+/).includes(assignment), `ENV sets ${assignment}`);
    assert.deepEqual(JSON.parse(instr(last, 'CMD').at(-1)!.slice('CMD'.length)), start.slice(node));
  });

  it('.dockerignore keeps local builds, modules, data and git out of the context', () => {
    const ignored = read(join(ROOT, '.dockerignore')).split('\n').map((l) => l.trim());
    for (const entry of ['.git', 'node_modules', 'dist', 'console/dist', 'data', '.env']) assert.ok(ignored.includes(entry), entry);
  });
});

describe('deployment settings', () => {
  const PG = 'postgres://writer:secret@db.internal:5433/switchyard?sslmode=require';
  const refused = (env: Record<string, string>, pattern: RegExp): void => {
    assert.throws(() => readSettings(env), (e: Error) => pattern.test(e.message) && !e.message.includes('secret'));
  };

  it('the reader is DATABASE_URL on DB_READER_HOST, with its port, user and password', () => {
    const same = new URL(readSettings({ DATABASE_URL: PG, DB_READER_HOST: 'replica.internal' }).databaseReaderUrl!);
    assert.equal(same.host, 'replica.internal:5433');
    assert.equal(same.username, 'writer');
    assert.equal(same.password, 'secret');
    assert.equal(same.pathname, '/switchyard');
    assert.equal(same.searchParams.get('sslmode'), 'require');
    assert.equal(same.searchParams.get('application_name'), 'switchyard-reader');
    const own = new URL(readSettings({ DATABASE_URL: PG, DB_READER_HOST: '10.0.0.7', DB_READER_PORT: '6432', DB_READER_USER: 'ro', DB_READER_PASS: 'p@ss' }).databaseReaderUrl!);
    assert.equal(own.host, '10.0.0.7:6432');
    assert.equal(decodeURIComponent(own.username), 'ro');
    assert.equal(decodeURIComponent(own.password), 'p@ss');
    assert.equal(new URL(readSettings({ DATABASE_URL: PG, DB_READER_HOST: '::1' }).databaseReaderUrl!).hostname, '[::1]');
    assert.equal(readSettings({ DATABASE_URL: PG }).databaseReaderUrl, undefined);
  });

  it('refuses a reader that cannot be made, naming the variable', () => {
    refused({ DATABASE_URL: PG, DB_READER_USER: 'ro' }, /DB_READER_USER set without DB_READER_HOST/);
    refused({ DB_READER_HOST: 'replica' }, /DB_READER_HOST needs DATABASE_URL/);
    refused({ DATABASE_URL: 'mysql://x@y/z', DB_READER_HOST: 'replica' }, /DB_READER_HOST needs DATABASE_URL to be a postgres/);
    refused({ DATABASE_URL: PG, DB_READER_HOST: 'replica/x' }, /DB_READER_HOST must be a host name or an IP address/);
    refused({ DATABASE_URL: PG, DB_READER_HOST: '*.replica' }, /DB_READER_HOST must be a host name/);
    refused({ DATABASE_URL: PG, DB_READER_HOST: 'replica', DB_READER_PORT: '70000' }, /DB_READER_PORT must be an integer between 1 and 65535/);
  });

  it('DB_WRITER_HA: off by default, on only with Postgres, on/off only', () => {
    assert.equal(readSettings({}).writerHa, false);
    assert.equal(readSettings({ DATABASE_URL: PG, DB_WRITER_HA: 'on' }).writerHa, true);
    refused({ DB_WRITER_HA: 'on' }, /DB_WRITER_HA=on needs DATABASE_URL/);
    refused({ DATABASE_URL: PG, DB_WRITER_HA: 'maybe' }, /DB_WRITER_HA must be on or off/);
  });

  it('OIDC_CUSTOM_SCOPES: a comma-separated list of OAuth scope tokens', () => {
    assert.deepEqual(readSettings({}).oidcCustomScopes, []);
    assert.deepEqual(readSettings({ OIDC_CUSTOM_SCOPES: ' groups, offline_access ,api://gw/read' }).oidcCustomScopes, ['groups', 'offline_access', 'api://gw/read']);
    refused({ OIDC_CUSTOM_SCOPES: 'groups,,email' }, /OIDC_CUSTOM_SCOPES: '' is not an OAuth scope/);
    refused({ OIDC_CUSTOM_SCOPES: 'read write' }, /OIDC_CUSTOM_SCOPES: 'read write' is not an OAuth scope/);
    refused({ OIDC_CUSTOM_SCOPES: 'a"b' }, /OIDC_CUSTOM_SCOPES/);
    refused({ OIDC_CUSTOM_SCOPES: 'email,email' }, /OIDC_CUSTOM_SCOPES: 'email' is listed twice/);
  });
});
