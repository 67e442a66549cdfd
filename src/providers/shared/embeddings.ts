/**
 * OpenAI's embeddings answer, for translators whose provider answers in its
 * own shape: the list body, and the base64 encoding OpenAI's clients ask for
 * (encoding_format: "base64") made from the provider's floats.
 */

/** OpenAI's base64 encoding: the vector as little-endian float32 bytes. */
export function float32Base64(vec: number[]): string {
  const buf = Buffer.allocUnsafe(vec.length * 4);
  for (let i = 0; i < vec.length; i++) buf.writeFloatLE(vec[i]!, i * 4);
  return buf.toString('base64');
}

/** The body of OpenAI's embeddings answer (serialized), one entry per vector in input order. */
export function openAIEmbeddingList(vectors: number[][], model: string, promptTokens: number, base64: boolean): string {
  return JSON.stringify({
    object: 'list',
    data: vectors.map((v, index) => ({ object: 'embedding', index, embedding: base64 ? float32Base64(v) : v })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}
