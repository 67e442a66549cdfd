/**
 * A worker's /metrics: the sum of every worker's series, gathered by the
 * primary (metrics-gather.ts). When the primary does not answer in time,
 * this worker's own series, so a scrape is never empty.
 */
import type { Metrics } from '../metrics/metrics.js';
import { METRICS_CALL_TIMEOUT_MS, type PrimaryLink } from './link.js';
import type { Scrape } from './metrics-gather.js';

export function scrapeCluster(link: PrimaryLink, metrics: Metrics): () => Promise<Scrape> {
  link.onGather = () => metrics.registry.getMetricsAsJSON();
  return async () => {
    try {
      return (await link.call('metrics', [], METRICS_CALL_TIMEOUT_MS)) as Scrape;
    } catch {
      return { contentType: metrics.registry.contentType, text: await metrics.registry.metrics() };
    }
  };
}
