/**
 * A function of a string memoised in a bounded map: for what configs name
 * (paths, patterns), which can arrive inline with each request, so past
 * `max` entries the oldest goes.
 */
export function boundedMemo<V>(max: number, compute: (key: string) => V): (key: string) => V {
  const cache = new Map<string, V>();
  return (key) => {
    if (cache.has(key)) return cache.get(key)!;
    const value = compute(key);
    if (cache.size >= max) cache.delete(cache.keys().next().value!);
    cache.set(key, value);
    return value;
  };
}

/**
 * A value made on first use and kept: for what most processes never need
 * (a route's compiled schema, a rarely used library) but that, once needed,
 * must cost nothing on the requests after.
 */
export function lazy<T>(make: () => T): () => T {
  let made = false;
  let value: T;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value;
  };
}
