/**
 * Dot paths into JSON values: `a.b.0.c` and `a.b[0].c` name the same place.
 * Used by drop_params and by conditional-routing queries, so the same few
 * paths are resolved on every request; parsed paths are cached.
 *
 * A segment is a number when it is an array index (`[0]`, or `.0`), else a
 * string key. Numbers index arrays; on plain objects they read the key of the
 * same spelling, so `choices.0` works whichever shape the value has. String
 * segments never read arrays (`messages.length` is missing, not a count).
 * Only own properties are visible, so `constructor` and friends are missing.
 */
import { boundedMemo } from './memo.js';

export type PathSegment = string | number;

type Container = Record<PathSegment, unknown>;

const TOKEN = /([^.[\]]+)|\[(\d+)\]/g;
// A key, or an index, then any number of `.key` or `[index]`; no empty keys.
const WELL_FORMED = /^(?:[^.[\]]+|\[\d+\])(?:\.[^.[\]]+|\[\d+\])*$/;
const CANONICAL_INDEX = /^(?:0|[1-9]\d*)$/;

const MAX_CACHED = 2048;

function parse(path: string): readonly PathSegment[] | null {
  if (!WELL_FORMED.test(path)) return null;
  const segments: PathSegment[] = [];
  for (const m of path.matchAll(TOKEN)) {
    const key = m[1];
    if (key === undefined) {
      segments.push(Number(m[2]));
    } else {
      const n = Number(key);
      segments.push(CANONICAL_INDEX.test(key) && Number.isSafeInteger(n) ? n : key);
    }
  }
  return segments;
}

/** The segments of `path`, or null when it is malformed (see validatePath). */
export const parsePath: (path: string) => readonly PathSegment[] | null = boundedMemo(MAX_CACHED, parse);

/** The value under one segment, or undefined when there is none. */
export function getChild(value: unknown, segment: PathSegment): unknown {
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) return typeof segment === 'number' ? value[segment] : undefined;
  return Object.hasOwn(value, segment) ? (value as Container)[segment] : undefined;
}

/**
 * Removes one segment from its container in place; true when something was
 * removed. An array element is taken out and later elements move down: a hole
 * would serialise as `null`, which is a value the provider would then see
 * (`messages: [null, …]`), not an absent one.
 */
export function removeChild(container: unknown, segment: PathSegment): boolean {
  if (Array.isArray(container)) {
    if (typeof segment !== 'number' || segment >= container.length) return false;
    // copyWithin + pop instead of splice: splice allocates the removed-items array.
    container.copyWithin(segment, segment + 1);
    container.pop();
    return true;
  }
  if (typeof container !== 'object' || container === null || !Object.hasOwn(container, segment)) return false;
  delete (container as Container)[segment];
  return true;
}

/** The value at `path`; undefined when any step is missing or the path is malformed. */
export function getPath(obj: unknown, path: string): unknown {
  const segments = parsePath(path);
  if (segments === null) return undefined;
  let value = obj;
  for (let i = 0; i < segments.length && value !== undefined; i++) value = getChild(value, segments[i]!);
  return value;
}
