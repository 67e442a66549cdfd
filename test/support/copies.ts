/**
 * Bytes copied while `run` runs, counted through Buffer.concat and
 * Buffer#copy (every copy of bytes between buffers goes through one of them):
 * the tests that a parser gathers a long frame in linear time, not by
 * joining all it holds on every chunk.
 */
export async function bytesCopied<T>(run: () => T | Promise<T>): Promise<{ value: T; copied: number }> {
  let copied = 0;
  const { concat } = Buffer;
  const { copy } = Buffer.prototype;
  Buffer.concat = (list: readonly Uint8Array[], length?: number) => {
    const joined = concat(list, length);
    copied += joined.length;
    return joined;
  };
  Buffer.prototype.copy = function (this: Buffer, ...args: Parameters<Buffer['copy']>) {
    const n = copy.apply(this, args);
    copied += n;
    return n;
  };
  try {
    return { value: await run(), copied };
  } finally {
    Buffer.concat = concat;
    Buffer.prototype.copy = copy;
  }
}
