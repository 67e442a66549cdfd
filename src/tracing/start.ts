/**
 * Starts the gateway's tracer. It sits above tracer.ts and otel.ts: otel.ts
 * implements the types of tracer.ts, so the loader of otel.ts cannot live in
 * tracer.ts without the two importing each other.
 */
import type { OtlpSettings } from '../settings.js';
import { NO_EXPORT, type Tracer } from './tracer.js';

/**
 * NO_EXPORT without OTLP settings; else the exporting tracer, whose module
 * (and the OpenTelemetry SDK under it) is imported only now.
 */
export async function startTracer(otlp: OtlpSettings | undefined, onExportError: (err: unknown) => void): Promise<Tracer> {
  if (otlp === undefined) return NO_EXPORT;
  const { exportingTracer } = await import('./otel.js');
  return exportingTracer(otlp, onExportError);
}
