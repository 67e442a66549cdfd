/**
 * Semantic matching behind the exact cache (answer-cache.ts), for configs
 * with `cache.mode: semantic`. A chat or completion that missed exactly has
 * its conversation embedded (embedder.ts) and compared by cosine similarity
 * with the stored answers of its partition (semantic-index.ts): the closest
 * at or above the threshold is a SEMANTIC HIT. A stored answer adds its
 * vector to the partition. When embedding fails the request is a plain miss:
 * counted and reported, warned once per config until an embedding of that
 * config succeeds again.
 */
import type { Plan } from '../routing/plan.js';
import type { GatewayError } from '../shared/errors.js';
import { semanticInput } from './conversation.js';
import type { Embedder, EmbeddingRequest } from './embedder.js';
import { cacheKey, type KeyParts } from './key.js';
import type { SemanticIndex } from './semantic-index.js';
import type { CachedAnswer, CacheStore } from './store.js';

/** Portkey's documented default. */
export const DEFAULT_SIMILARITY_THRESHOLD = 0.95;

/** Configs whose embeddings fail, remembered so each is warned about once; forgotten all at once past this many. */
const MAX_FAILING_CONFIGS = 1024;

/** A request's place in the index: its partition and its conversation's vector. */
export interface SemanticQuery {
  partition: string;
  vector: Float32Array;
}

/** Told of every failed embedding; `first`: the first of its config since the last success. */
export type EmbeddingFailureReport = (config: string, error: GatewayError, first: boolean) => void;

export class SemanticCache {
  private readonly failing = new Set<string>();

  constructor(
    private readonly embedder: Embedder,
    private readonly index: SemanticIndex,
    private readonly store: CacheStore,
    private readonly onFailure: EmbeddingFailureReport,
  ) {}

  /**
   * The request's query; null when it is matched exactly only (not a chat or
   * completion of plain text) or its embedding failed. `parts` are its exact
   * key's parts: the partition is the same key with the body's non-conversation part.
   */
  async query(plan: Plan, parts: KeyParts, body: Record<string, unknown>, r: Omit<EmbeddingRequest, 'text'>): Promise<SemanticQuery | null> {
    const input = semanticInput(body);
    if (input === null) return null;
    const vector = await this.embedder.embed(plan, { ...r, text: input.text });
    if (!vector.ok) {
      this.failed(plan, vector.error);
      return null;
    }
    this.failing.delete(plan.identity);
    return { partition: cacheKey({ ...parts, body: input.exact }), vector: vector.value };
  }

  /** The stored answer of the most similar entry, or null; an entry whose answer is gone is dropped. */
  async find(q: SemanticQuery, threshold: number, now: number): Promise<CachedAnswer | null> {
    const entry = await this.index.nearest(q.partition, q.vector, threshold, now);
    if (entry === null) return null;
    const answer = await this.store.get(entry.key, now);
    if (answer === null) this.index.forget(q.partition, entry.key);
    return answer;
  }

  /** Indexes the answer just stored under `key`. */
  add(q: SemanticQuery, key: string, expiresAt: number, now: number): Promise<void> {
    return this.index.add(q.partition, { key, vector: q.vector, expiresAt }, now);
  }

  private failed(plan: Plan, error: GatewayError): void {
    const first = !this.failing.has(plan.identity);
    if (first) {
      if (this.failing.size >= MAX_FAILING_CONFIGS) this.failing.clear();
      this.failing.add(plan.identity);
    }
    this.onFailure(plan.configId ?? plan.identity, error, first);
  }
}
