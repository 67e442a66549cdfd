/**
 * A target's edits to the request body: override_params, default_params and
 * drop_params, applied in that order.
 *
 * The client's body is never modified: a retry, or a fallback to another
 * target with other edits, must start again from what the client sent. The
 * result is a new top-level object that shares every nested value it does not
 * change with the body and the config; only the containers along a drop path
 * are copied (copy on write). Callers must treat nested values as read-only.
 */
import { getChild, parsePath, removeChild, type PathSegment } from '../shared/dot-path.js';

type Path = readonly PathSegment[];
type Container = Record<PathSegment, unknown>;

export function applyParamEdits(
  body: Record<string, unknown>,
  edits: { override_params?: Record<string, unknown>; default_params?: Record<string, unknown>; drop_params?: string[] },
): Record<string, unknown> {
  // One spread does both merges: a default survives only where neither the
  // client nor an override set the key. A key the client sent counts as sent
  // even when its value is null. override_params replace top-level keys whole,
  // as Portkey's `{ ...requestBody, ...overrideParams }` does: an override of
  // `response_format` replaces the client's object, it is not merged into it.
  // (Spread also defines a `__proto__` key as data, where assignment would
  // reset the prototype.)
  const out: Record<string, unknown> = { ...edits.default_params, ...body, ...edits.override_params };
  const drops = edits.drop_params;
  if (drops !== undefined && drops.length > 0) dropAll(out, removalOrder(drops));
  return out;
}

// Plans are cached per config, so the same drop_params array recurs.
const orderCache = new WeakMap<readonly string[], readonly Path[]>();

/**
 * Every drop path names a place in the body as the client sent it. Removing
 * `messages[0]` first would shift `messages[1]` onto another message, so
 * paths run with higher indices before lower ones and deeper paths before
 * their prefixes. Malformed paths are skipped: config validation reports them.
 * Computed once per drop_params array.
 */
function removalOrder(drops: readonly string[]): readonly Path[] {
  let order = orderCache.get(drops);
  if (order === undefined) {
    const paths: Path[] = [];
    for (const d of drops) {
      const p = parsePath(d);
      if (p !== null) paths.push(p);
    }
    paths.sort(compareForRemoval);
    // `m[0]` and `m.0` (or one path inherited twice) name one element: remove it once.
    order = paths.filter((p, i) => i === 0 || compareForRemoval(paths[i - 1]!, p) !== 0);
    orderCache.set(drops, order);
  }
  return order;
}

function compareForRemoval(a: Path, b: Path): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number') return typeof y === 'number' ? y - x : 1;
    if (typeof y === 'number') return -1;
    // Different keys never interact; any consistent order will do.
    return x < y ? -1 : 1;
  }
  return b.length - a.length;
}

function dropAll(out: Record<string, unknown>, paths: readonly Path[]): void {
  // Containers this call created; they may be changed in place.
  let owned: Set<unknown> | undefined;
  for (const path of paths) {
    const last = path.length - 1;
    // Look before copying: most drop paths name fields the client did not send.
    let node: unknown = out;
    for (let i = 0; i < last && node !== undefined; i++) node = getChild(node, path[i]!);
    if (getChild(node, path[last]!) === undefined) continue;

    let parent: Container = out;
    for (let i = 0; i < last; i++) {
      const segment = path[i]!;
      // Exists and is a container: the walk above reached the leaf through it.
      let child = parent[segment] as Container;
      if (owned === undefined || !owned.has(child)) {
        child = (Array.isArray(child) ? child.slice() : { ...child }) as Container;
        (owned ??= new Set()).add(child);
        parent[segment] = child;
      }
      parent = child;
    }
    removeChild(parent, path[last]!);
  }
}
