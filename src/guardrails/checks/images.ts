/**
 * default.inlineImageUrls, before the request: the images a chat request
 * names by http(s) URL (`image_url.url` parts of any message) are fetched
 * and written into the request as base64 data URLs, for providers that do
 * not fetch URLs themselves. `providers`: only requests to these (when the
 * provider is known before the request: one target, or the request's
 * header; otherwise every request); `maxSizeBytes` per image (default
 * 20 MiB); `timeoutMs` per fetch (default 30 s).
 *
 * Fetches go through the upstream client: its address policy applies (no
 * metadata or other denied addresses), redirects are not followed. An image
 * that cannot be fetched (or is no image, or too large) is an error: the
 * request goes on unchanged, and fails only with failOnError. Passes
 * otherwise.
 */
import { int, nonEmptyStr, optional, arrayOf } from '../../shared/json-schema.js';
import { asIs, type CheckDefinition, type Verdict } from '../check.js';
import { call, originOf } from '../outbound.js';

const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;
/** Images fetched for one request, side by side: their bytes are held until the request is sent. */
const MAX_IMAGES = 16;

interface Inline {
  providers?: string[];
  maxSizeBytes?: number;
  timeoutMs?: number;
}

type Json = Record<string, unknown>;

export const inlineImageUrls: CheckDefinition<Inline> = {
  hooks: ['before'],
  parameters: optional({
    providers: arrayOf(nonEmptyStr, 'an array of provider names'),
    maxSizeBytes: int(1, 1024 * 1024 * 1024),
    timeoutMs: int(1, 600_000),
  }),
  prepare: asIs,
  async run(s, p): Promise<Verdict> {
    if (s.endpoint !== 'chat') return { verdict: true, explanation: 'only chat requests carry images' };
    const provider = s.reach.provider;
    if (p.providers !== undefined && provider !== undefined && !p.providers.includes(provider)) {
      return { verdict: true, explanation: `images are inlined only for ${p.providers.join(', ')}, not ${provider}` };
    }
    const request = structuredClone(s.request) as Json;
    const parts = imageParts(request.messages);
    if (parts.length === 0) return { verdict: true, explanation: 'the request has no image URLs' };
    if (parts.length > MAX_IMAGES) throw new Error(`the request has ${parts.length} image URLs, more than the ${MAX_IMAGES} inlined`);
    const maxBytes = p.maxSizeBytes ?? DEFAULT_MAX_BYTES;
    const timeoutMs = p.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const bytes = await Promise.all(parts.map((part) => dataUrl(part.url as string, maxBytes, timeoutMs)));
    parts.forEach((part, i) => (part.url = bytes[i]));
    return { verdict: true, explanation: `${parts.length} image URL(s) inlined`, data: { inlined: parts.length }, request };
  },
};

/** The `image_url` objects of the messages whose URL is http(s). */
function imageParts(messages: unknown): Json[] {
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((m) => {
    const content = (m as Json | null)?.content;
    if (!Array.isArray(content)) return [];
    return content.flatMap((part): Json[] => {
      const image = (part as Json | null)?.type === 'image_url' ? (part as Json).image_url : undefined;
      return typeof image === 'object' && image !== null && typeof (image as Json).url === 'string' && /^https?:\/\//i.test((image as Json).url as string) ? [image as Json] : [];
    });
  });
}

async function dataUrl(url: string, maxBytes: number, timeoutMs: number): Promise<string> {
  const res = await call({ url, method: 'GET', headers: { accept: 'image/*' }, timeoutMs, maxBytes });
  const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!type.startsWith('image/')) throw new Error(`${originOf(url)} answered ${type === '' ? 'no content type' : type}, not an image`);
  return `data:${type};base64,${res.body.toString('base64')}`;
}
