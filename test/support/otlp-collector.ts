// A mock OpenTelemetry collector on loopback: OTLP/HTTP trace export (POST /v1/traces),
// decoded from the wire itself, protobuf (ExportTraceServiceRequest, read with a small
// protobuf reader written from the .proto field numbers) or OTLP/JSON, so a test sees
// the spans exactly as a real collector would receive them.
import { startMockServer, type RecordedRequest } from './mock-server.js';

export type AttrValue = string | number | boolean;

export interface ExportedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  traceState: string;
  name: string;
  /** OTLP SpanKind: 2 SERVER, 3 CLIENT. */
  kind: number;
  attributes: Record<string, AttrValue>;
  /** OTLP StatusCode: 0 UNSET, 1 OK, 2 ERROR. */
  status: { code: number; message: string };
  resource: Record<string, AttrValue>;
  /** The request that carried it (content type, headers). */
  request: RecordedRequest;
}

export const SPAN_KIND = { SERVER: 2, CLIENT: 3 } as const;
export const STATUS_CODE = { UNSET: 0, OK: 1, ERROR: 2 } as const;

export interface OtlpCollector {
  /** http://127.0.0.1:<port>: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  requests: RecordedRequest[];
  spans: ExportedSpan[];
  close(): Promise<void>;
}

/** `status` other than 200 refuses every export with it. */
export async function startOtlpCollector(opts: { status?: number } = {}): Promise<OtlpCollector> {
  const spans: ExportedSpan[] = [];
  const server = await startMockServer<never>((rec, _req, res) => {
    if (rec.method !== 'POST' || rec.path !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const type = rec.headers['content-type'] ?? '';
    if (opts.status !== undefined && opts.status !== 200) {
      res.writeHead(opts.status, { 'content-type': 'application/json' }).end('{"code":3,"message":"refused by the test"}');
      return;
    }
    if (type.startsWith('application/x-protobuf')) {
      spans.push(...decodeProtobuf(rec));
      // An empty ExportTraceServiceResponse.
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    } else if (type.startsWith('application/json')) {
      spans.push(...decodeJson(rec));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else {
      res.writeHead(415).end();
    }
  });
  return { url: server.url, requests: server.requests, spans, close: () => server.close() };
}

// ---- OTLP/JSON ----

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
}

function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) out[key] = value.stringValue;
    else if (value.boolValue !== undefined) out[key] = value.boolValue;
    else if (value.intValue !== undefined) out[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) out[key] = value.doubleValue;
  }
  return out;
}

function decodeJson(rec: RecordedRequest): ExportedSpan[] {
  const out: ExportedSpan[] = [];
  for (const rs of rec.json.resourceSpans ?? []) {
    const resource = jsonAttributes(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? '',
          traceState: s.traceState ?? '',
          name: s.name,
          kind: Number(s.kind),
          attributes: jsonAttributes(s.attributes),
          status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? '' },
          resource,
          request: rec,
        });
      }
    }
  }
  return out;
}

// ---- protobuf ----

/** One field of a protobuf message: varints as bigint, everything else as its bytes. */
interface Field {
  no: number;
  value: bigint | Buffer;
}

function readVarint(buf: Buffer, at: { pos: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[at.pos++]!;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return result;
    shift += 7n;
  }
}

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const tag = Number(readVarint(buf, at));
    const no = tag >>> 3;
    switch (tag & 7) {
      case 0:
        out.push({ no, value: readVarint(buf, at) });
        break;
      case 1:
        out.push({ no, value: buf.subarray(at.pos, (at.pos += 8)) });
        break;
      case 2: {
        const len = Number(readVarint(buf, at));
        out.push({ no, value: buf.subarray(at.pos, (at.pos += len)) });
        break;
      }
      case 5:
        out.push({ no, value: buf.subarray(at.pos, (at.pos += 4)) });
        break;
      default:
        throw new Error(`unsupported protobuf wire type ${tag & 7}`);
    }
  }
  return out;
}

const bytesOf = (f: Field[], no: number): Buffer[] => f.filter((x) => x.no === no).map((x) => x.value as Buffer);
const first = (f: Field[], no: number): Field['value'] | undefined => f.find((x) => x.no === no)?.value;
const text = (f: Field[], no: number): string => ((first(f, no) as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8');
const hex = (f: Field[], no: number): string => ((first(f, no) as Buffer | undefined) ?? Buffer.alloc(0)).toString('hex');

/** KeyValue { string key = 1; AnyValue value = 2 }; AnyValue { string 1; bool 2; int64 3; double 4; … }. */
function protoAttributes(list: Buffer[]): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const kvBytes of list) {
    const kv = fields(kvBytes);
    const any = fields((first(kv, 2) as Buffer | undefined) ?? Buffer.alloc(0));
    const v = any[0];
    if (v === undefined) continue;
    const key = text(kv, 1);
    if (v.no === 1) out[key] = (v.value as Buffer).toString('utf8');
    else if (v.no === 2) out[key] = v.value === 1n;
    else if (v.no === 3) out[key] = Number(BigInt.asIntN(64, v.value as bigint));
    else if (v.no === 4) out[key] = (v.value as Buffer).readDoubleLE(0);
  }
  return out;
}

/**
 * ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1 };
 * ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2 };
 * Resource { repeated KeyValue attributes = 1 }; ScopeSpans { scope = 1; repeated Span spans = 2 };
 * Span { trace_id 1; span_id 2; trace_state 3; parent_span_id 4; name 5; kind 6; attributes 9; status 15 };
 * Status { message 2; code 3 }.
 */
function decodeProtobuf(rec: RecordedRequest): ExportedSpan[] {
  const out: ExportedSpan[] = [];
  for (const rsBytes of bytesOf(fields(rec.body), 1)) {
    const rs = fields(rsBytes);
    const resource = protoAttributes(bytesOf(fields((first(rs, 1) as Buffer | undefined) ?? Buffer.alloc(0)), 1));
    for (const ssBytes of bytesOf(rs, 2)) {
      for (const spanBytes of bytesOf(fields(ssBytes), 2)) {
        const s = fields(spanBytes);
        const status = fields((first(s, 15) as Buffer | undefined) ?? Buffer.alloc(0));
        out.push({
          traceId: hex(s, 1),
          spanId: hex(s, 2),
          parentSpanId: hex(s, 4),
          traceState: text(s, 3),
          name: text(s, 5),
          kind: Number(first(s, 6) ?? 0n),
          attributes: protoAttributes(bytesOf(s, 9)),
          status: { code: Number(first(status, 3) ?? 0n), message: text(status, 2) },
          resource,
          request: rec,
        });
      }
    }
  }
  return out;
}
