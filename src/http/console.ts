/**
 * The console's files at /console (docs/console.md): what `npm run build`
 * put in console/dist, read once into memory and served by exact name. Only
 * names found there answer, so no path a client writes (`..`, encoded
 * slashes, NUL) can reach another file. Every answer carries a strict
 * Content-Security-Policy: scripts and styles from this origin only, no
 * inline code, calls only to this origin (the management API).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatewayError } from '../shared/errors.js';
import { sendError } from './respond.js';

/** Where `npm run build` writes the console: <root>/console/dist, from dist/src/http/. */
export const CONSOLE_DIR = fileURLToPath(new URL('../../../console/dist/', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/** Bundles are named by their content hash (console/build.mjs): kept for a year; the page itself is checked each time. */
const HASHED = /-[A-Z0-9]{8,}\.(?:js|css)$/;

interface ConsoleFile {
  body: Buffer;
  type: string;
  etag: string;
  cache: string;
}

/** Every file under `dir` by its path below it, `/`-separated; files of unknown types are not served. */
function readTree(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const type = TYPES[extname(entry.name)];
    if (type === undefined) continue;
    const full = join(entry.parentPath, entry.name);
    const name = relative(dir, full).split(sep).join('/');
    const body = readFileSync(full);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    files.set(name, { body, type, etag, cache: HASHED.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache' });
  }
  return files;
}

export class ConsoleFiles {
  private files: Map<string, ConsoleFile> | null = null;

  constructor(private readonly dir: string = CONSOLE_DIR) {}

  /** Whether `pathname` is the console's. */
  static owns(pathname: string): boolean {
    return pathname === '/console' || pathname.startsWith('/console/');
  }

  /** Read at the first request, not at start: a gateway without a built console still starts (and says so here). */
  private load(): Map<string, ConsoleFile> | null {
    if (this.files === null) {
      try {
        this.files = readTree(this.dir);
      } catch {
        return null;
      }
    }
    return this.files;
  }

  serve(req: IncomingMessage, res: ServerResponse, pathname: string): void {
    res.setHeader('content-security-policy', CONSOLE_CSP);
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return sendError(res, new GatewayError(405, `method ${req.method} is not allowed on the console`, { code: 'method_not_allowed' }));
    }
    const files = this.load();
    const index = files?.get('index.html');
    if (files === null || index === undefined) {
      return sendError(res, new GatewayError(503, 'the console is not built: run `npm run build`', { code: 'console_not_built' }));
    }
    // The page is one document: /console and /console/ are it; its routes live in the fragment (#/logs).
    const name = pathname === '/console' || pathname === '/console/' ? 'index.html' : pathname.slice('/console/'.length);
    const file = files.get(name);
    if (file === undefined) return sendError(res, new GatewayError(404, `no console file ${pathname}`, { code: 'route_not_found' }));
    const headers = { 'content-type': file.type, 'cache-control': file.cache, etag: file.etag };
    if (req.headers['if-none-match'] === file.etag) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': file.body.length });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }
}
