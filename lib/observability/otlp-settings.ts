/**
 * Where the gateway sends its spans, read from OpenTelemetry's standard variables: off unless an
 * OTLP endpoint is set (and `OTEL_SDK_DISABLED` / `OTEL_TRACES_EXPORTER=none` turn it off again).
 * @see https://opentelemetry.io/docs/specs/otel/protocol/exporter/
 * @see https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/
 */

export interface OtlpSettings {
  /** The traces URL: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  url: URL;
  headers: Record<string, string>;
  /** Milliseconds an export may take before it is given up (`OTEL_EXPORTER_OTLP[_TRACES]_TIMEOUT`, default 10 s). */
  timeoutMs: number;
  /** `service.name` of the resource (`OTEL_SERVICE_NAME`, default the function's name or `llm-gateway`). */
  serviceName: string;
  /** `http/json` or `http/protobuf`. */
  protocol: 'http/json' | 'http/protobuf';
}

let cached: { source: string; settings: OtlpSettings | undefined } | undefined;

/** The settings, or undefined when export is off. Read again only when the variables change. */
export function otlpSettings(env: NodeJS.ProcessEnv = process.env): OtlpSettings | undefined {
  const source = [
    env.OTEL_SDK_DISABLED,
    env.OTEL_TRACES_EXPORTER,
    env.OTEL_EXPORTER_OTLP_ENDPOINT,
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
    env.OTEL_EXPORTER_OTLP_HEADERS,
    env.OTEL_EXPORTER_OTLP_TRACES_HEADERS,
    env.OTEL_EXPORTER_OTLP_TIMEOUT,
    env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
    env.OTEL_EXPORTER_OTLP_PROTOCOL,
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
    env.OTEL_SERVICE_NAME,
  ].join('\u0000');
  if (cached?.source !== source) {
    let settings: OtlpSettings | undefined;
    try {
      settings = readSettings(env);
    } catch (error) {
      // A misconfigured exporter turns telemetry off, never a request away: said once per configuration.
      console.warn(`OpenTelemetry export is off: ${(error as Error).message}`);
    }
    cached = { source, settings };
  }
  return cached.settings;
}

function readSettings(env: NodeJS.ProcessEnv): OtlpSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(',').map((name) => name.trim().toLowerCase());
  if (exporters && !exporters.includes('otlp')) return undefined;
  const url = tracesUrl(env);
  if (!url) return undefined;
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/json or http/protobuf for the gateway's exporter; got ${JSON.stringify(protocol)}.`);
  }
  return {
    url,
    headers: { ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    timeoutMs: milliseconds(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT, 10_000),
    serviceName: env.OTEL_SERVICE_NAME?.trim() || env.AWS_LAMBDA_FUNCTION_NAME || 'llm-gateway',
    protocol,
  };
}

function tracesUrl(env: NodeJS.ProcessEnv): URL | undefined {
  const signal = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const raw = signal || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined);
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`The OTLP traces endpoint must be an http(s) URL; got ${JSON.stringify(raw)}.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`The OTLP traces endpoint must be http or https; got ${url.protocol}.`);
  return url;
}

/** `key1=value1,key2=value2`, values URL-encoded, as the specification writes them. */
function parseHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!raw) return headers;
  for (const pair of raw.split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[decodeURIComponent(pair.slice(0, at).trim()).toLowerCase()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

function milliseconds(raw: string | undefined, fallback: number): number {
  const value = Number(raw);
  return raw !== undefined && Number.isFinite(value) && value > 0 ? value : fallback;
}
