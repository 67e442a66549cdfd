/**
 * What a body's headers say it is, for code that reads bodies as they pass:
 * JSON or an event stream, and whether its bytes are readable (not
 * compressed). One reading of Content-Type, parameters and case aside.
 */
type Headers = Readonly<Record<string, string | string[] | undefined>>;

/** The media type without parameters, lower-cased; null when there is none. */
function mediaType(contentType: unknown): string | null {
  if (typeof contentType !== 'string') return null;
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** application/json or an application/…+json type. */
export function isJsonType(contentType: unknown): boolean {
  const t = mediaType(contentType);
  return t !== null && t.startsWith('application/') && (t === 'application/json' || t.endsWith('+json'));
}

export function isEventStreamType(contentType: unknown): boolean {
  return mediaType(contentType) === 'text/event-stream';
}

/** The body's bytes are as sent (no content coding): the gateway can read them. */
export function isReadable(h: Headers): boolean {
  const encoding = h['content-encoding'];
  return encoding === undefined || encoding === 'identity';
}
