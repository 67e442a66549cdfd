/**
 * Two nginx instances from generated configs: the static upstream (fixed
 * non-streaming answers via `return`) and the reference proxy, the floor any
 * proxy in front of that upstream can reach.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnTracked, waitExit } from './children.js';
import { CHAT_RESPONSE, EMBEDDINGS_RESPONSE } from './fixtures.js';

function nginxString(s: string): string {
  // nginx expands $ in return text and has no escape for it.
  if (s.includes('$')) throw new Error(`nginx cannot return a literal $: ${s}`);
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** One worker, no access log, temp paths and pid file kept inside `dir`. */
function main(dir: string, http: string): string {
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # Never close client connections mid-run (the default closes after 1000 requests).
  keepalive_requests 1000000;
  keepalive_timeout 120s;
${http}
}
`;
}

/**
 * `bigEmbeddings`: an embeddings answer too long for `return` (bench/memory.ts: 19 KB), served
 * from a file instead (a POST to a file is a 405, which error_page turns into the file as a GET).
 */
export function staticUpstreamConfig(dir: string, port: number, bigEmbeddings?: string): string {
  let embeddings = `return 200 ${nginxString(EMBEDDINGS_RESPONSE)};`;
  if (bigEmbeddings !== undefined) {
    writeFileSync(join(dir, 'embeddings.json'), bigEmbeddings);
    embeddings = `alias ${dir}/embeddings.json; error_page 405 =200 $uri;`;
  }
  return main(
    dir,
    `  server {
    listen 127.0.0.1:${port};
    default_type application/json;
    location = /v1/chat/completions { return 200 ${nginxString(CHAT_RESPONSE)}; }
    location = /v1/embeddings { ${embeddings} }
  }`,
  );
}

/** Proxies `listen.chat` to the static upstream and `listen.stream` to the streaming one. */
export function proxyConfig(
  dir: string,
  listen: { chat: number; stream: number },
  upstream: { chat: number; stream: number },
): string {
  const server = (port: number, pool: string): string => `  server {
    listen 127.0.0.1:${port};
    location / { proxy_pass http://${pool}; }
  }`;
  return main(
    dir,
    `  upstream chat_upstream { server 127.0.0.1:${upstream.chat}; keepalive 64; keepalive_requests 1000000; }
  upstream stream_upstream { server 127.0.0.1:${upstream.stream}; keepalive 64; keepalive_requests 1000000; }
  # Keep-alive to the upstream needs HTTP/1.1 and no "Connection: close"; unbuffered so SSE events pass at once.
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_buffering off;
${server(listen.chat, 'chat_upstream')}
${server(listen.stream, 'stream_upstream')}`,
  );
}

/** Writes `config(dir)` into `dir` and runs nginx on `core`; the returned process is its master. */
export function startNginx(dir: string, config: (dir: string) => string, core: number): ChildProcess {
  mkdirSync(dir, { recursive: true });
  const confPath = join(dir, 'nginx.conf');
  writeFileSync(confPath, config(dir));
  return spawnTracked('taskset', ['-c', String(core), 'nginx', '-p', dir, '-e', join(dir, 'error.log'), '-c', confPath], {
    stdio: 'ignore',
  });
}

/** Explains why an nginx started by startNginx is not serving. */
export async function nginxFailure(dir: string, master: ChildProcess): Promise<string> {
  await waitExit(master, 500);
  let log = '';
  try {
    log = readFileSync(join(dir, 'error.log'), 'utf8').trim().split('\n').slice(-5).join('\n');
  } catch {
    log = '(no error.log)';
  }
  return `nginx in ${dir} exited with ${master.exitCode ?? master.signalCode ?? 'no exit'}: ${log}`;
}
